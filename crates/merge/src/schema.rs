//! The type model structured merge works on: named types made of atoms (scalar, list, map), as
//! structured-merge-diff defines them.

use std::collections::HashMap;

use serde_json::Value;

/// The kind of a scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// Integers and floats.
    Numeric,
    /// Strings.
    String,
    /// Booleans.
    Boolean,
    /// Any scalar.
    Untyped,
}

/// How the elements of a list or map relate to each other for merging and ownership.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relationship {
    /// The whole container is one value: replaced, owned and compared as a unit.
    Atomic,
    /// A list whose items are identified by key fields (map list) or by value (set).
    Associative,
    /// A map whose fields are merged and owned one by one.
    Separable,
}

/// A type: any combination of scalar, list and map; the shape of a value picks one.
#[derive(Clone, Debug, Default)]
pub struct Atom {
    /// Present when the type accepts scalars.
    pub scalar: Option<Scalar>,
    /// Present when the type accepts lists.
    pub list: Option<ListType>,
    /// Present when the type accepts maps.
    pub map: Option<MapType>,
}

/// A list type.
#[derive(Clone, Debug)]
pub struct ListType {
    /// Type of every item.
    pub element: TypeRef,
    /// Atomic or associative.
    pub relationship: Relationship,
    /// Key fields of an associative list of maps; empty for a set of scalars.
    pub keys: Vec<String>,
}

/// A map type: named fields (a struct) and/or a type for any other key.
#[derive(Clone, Debug)]
pub struct MapType {
    /// Declared fields.
    pub fields: Vec<StructField>,
    index: HashMap<String, usize>,
    /// Type of keys that are not declared fields; `None` means such keys are invalid.
    pub element: Option<TypeRef>,
    /// Separable (granular) or atomic.
    pub relationship: Relationship,
}

/// A declared field of a map type.
#[derive(Clone, Debug)]
pub struct StructField {
    /// Field name.
    pub name: String,
    /// Field type.
    pub ty: TypeRef,
    /// Default value, used for missing list keys.
    pub default: Option<Value>,
}

/// A reference to a type, either by name or inline, optionally overriding the element relationship.
#[derive(Clone, Debug)]
pub struct TypeRef {
    /// What the reference points at.
    pub target: Target,
    /// Field-level override of the referenced map's (or list's) relationship.
    pub relationship: Option<Relationship>,
}

/// The target of a [`TypeRef`].
#[derive(Clone, Debug)]
pub enum Target {
    /// A named type, by index into the schema.
    Named(usize),
    /// An inline type.
    Inline(Box<Atom>),
}

impl MapType {
    /// A map type from its fields, element type and relationship.
    pub fn new(
        fields: Vec<StructField>,
        element: Option<TypeRef>,
        relationship: Relationship,
    ) -> MapType {
        let index = fields
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name.clone(), i))
            .collect();
        MapType {
            fields,
            index,
            element,
            relationship,
        }
    }

    /// The declared field called `name`.
    pub fn field(&self, name: &str) -> Option<&StructField> {
        self.index.get(name).map(|&i| &self.fields[i])
    }

    /// The type of the value under `key`: the declared field's type or the element type.
    pub fn type_of(&self, key: &str) -> Option<&TypeRef> {
        match self.field(key) {
            Some(f) => Some(&f.ty),
            None => self.element.as_ref(),
        }
    }
}

impl TypeRef {
    /// A reference to a named type.
    pub fn named(index: usize) -> TypeRef {
        TypeRef {
            target: Target::Named(index),
            relationship: None,
        }
    }

    /// An inline type.
    pub fn inline(atom: Atom) -> TypeRef {
        TypeRef {
            target: Target::Inline(Box::new(atom)),
            relationship: None,
        }
    }
}

/// A resolved type reference: the atom plus any relationship override.
#[derive(Clone, Copy)]
pub struct Resolved<'a> {
    /// The atom.
    pub atom: &'a Atom,
    override_: Option<Relationship>,
}

impl<'a> Resolved<'a> {
    /// The list part and its effective relationship.
    pub fn list(&self) -> Option<(&'a ListType, Relationship)> {
        let list = self.atom.list.as_ref()?;
        let rel = match self.override_ {
            Some(r) if self.atom.map.is_none() => r,
            _ => list.relationship,
        };
        Some((list, rel))
    }

    /// The map part and its effective relationship.
    pub fn map(&self) -> Option<(&'a MapType, Relationship)> {
        let map = self.atom.map.as_ref()?;
        Some((map, self.override_.unwrap_or(map.relationship)))
    }

    /// The scalar part.
    pub fn scalar(&self) -> Option<Scalar> {
        self.atom.scalar
    }
}

/// A set of named types; every schema starts with the two untyped types.
#[derive(Clone, Debug)]
pub struct Schema {
    types: Vec<Atom>,
    names: HashMap<String, usize>,
}

/// Name of the untyped atomic type every schema carries.
pub const UNTYPED_ATOMIC: &str = "__untyped_atomic_";
/// Name of the untyped deduced type every schema carries.
pub const UNTYPED_DEDUCED: &str = "__untyped_deduced_";
const ATOMIC_INDEX: usize = 0;
const DEDUCED_INDEX: usize = 1;

/// An untyped atom: any scalar, atomic lists of untyped atomic values, and maps whose values are
/// of type `map_element` with relationship `map_rel`.
fn untyped(map_element: usize, map_rel: Relationship) -> Atom {
    Atom {
        scalar: Some(Scalar::Untyped),
        list: Some(ListType {
            element: TypeRef::named(ATOMIC_INDEX),
            relationship: Relationship::Atomic,
            keys: Vec::new(),
        }),
        map: Some(MapType::new(
            Vec::new(),
            Some(TypeRef::named(map_element)),
            map_rel,
        )),
    }
}

impl Default for Schema {
    fn default() -> Schema {
        Schema::new()
    }
}

impl Schema {
    /// An empty schema holding only the two untyped types.
    pub fn new() -> Schema {
        let mut s = Schema {
            types: Vec::new(),
            names: HashMap::new(),
        };
        let atomic = s.declare(UNTYPED_ATOMIC);
        let deduced = s.declare(UNTYPED_DEDUCED);
        debug_assert_eq!((atomic, deduced), (ATOMIC_INDEX, DEDUCED_INDEX));
        s.define(atomic, untyped(ATOMIC_INDEX, Relationship::Atomic));
        s.define(deduced, untyped(DEDUCED_INDEX, Relationship::Separable));
        s
    }

    /// The untyped atomic type: any value, owned as a whole.
    pub fn untyped_atomic(&self) -> Atom {
        self.types[ATOMIC_INDEX].clone()
    }

    /// Reserves a name (idempotent) and returns its index.
    pub fn declare(&mut self, name: &str) -> usize {
        if let Some(&i) = self.names.get(name) {
            return i;
        }
        self.types.push(Atom::default());
        let i = self.types.len() - 1;
        self.names.insert(name.to_string(), i);
        i
    }

    /// Sets the atom of a declared type.
    pub fn define(&mut self, index: usize, atom: Atom) {
        self.types[index] = atom;
    }

    /// The index of a named type.
    pub fn lookup(&self, name: &str) -> Option<usize> {
        self.names.get(name).copied()
    }

    /// A reference to a named type, if it exists.
    pub fn type_ref(&self, name: &str) -> Option<TypeRef> {
        self.lookup(name).map(TypeRef::named)
    }

    /// The names of all named types.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.keys().map(String::as_str)
    }

    /// Reference to the untyped deduced type (maps granular, lists atomic).
    pub fn deduced(&self) -> TypeRef {
        TypeRef::named(DEDUCED_INDEX)
    }

    /// Resolves a reference. `None` when an override is applied to a scalar-only type.
    pub fn resolve<'a>(&'a self, tr: &'a TypeRef) -> Option<Resolved<'a>> {
        let atom = match &tr.target {
            Target::Named(i) => self.types.get(*i)?,
            Target::Inline(a) => a,
        };
        if tr.relationship.is_some() && atom.map.is_none() && atom.list.is_none() {
            return None;
        }
        Some(Resolved {
            atom,
            override_: tr.relationship,
        })
    }
}
