//! The commit message: `spec.git.commit.messageTemplate` executed as Go's `text/template` with
//! Sprig's hermetic functions on the data Flux gives it: `.AutomationObject` (namespace/name),
//! `.Changed` (`.FileChanges`, and the methods `.Changes` and `.Objects`) and `.Values`.

use std::any::Any;
use std::collections::BTreeMap;
use std::rc::Rc;

use tidegate_helm::template::func::Func;
use tidegate_helm::template::value::{MapKind, Object};
use tidegate_helm::template::{Set, Value};
use tidegate_source::image::setters::{Change, ObjectChanges, ObjectIdentifier};

/// Flux's message when no template is given.
pub const DEFAULT_MESSAGE: &str = "Update from image update automation";

/// Sprig functions that may give different results for the same input (Sprig's
/// `nonhermeticFunctions`).
const NON_HERMETIC: &[&str] = &[
    "date",
    "date_in_zone",
    "date_modify",
    "now",
    "htmlDate",
    "htmlDateInZone",
    "dateInZone",
    "dateModify",
    "randAlphaNum",
    "randAlpha",
    "randAscii",
    "randNumeric",
    "uuidv4",
    "env",
    "expandenv",
    "getHostByName",
];

/// Why the message could not be made.
#[derive(Debug, PartialEq)]
pub enum MessageError {
    /// The template uses a field Flux removed (`Stalled`, `RemovedTemplateField`).
    RemovedField(String),
    /// Any other parse or execution error.
    Failed(String),
}

impl std::fmt::Display for MessageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MessageError::RemovedField(m) | MessageError::Failed(m) => f.write_str(m),
        }
    }
}

const DOCS: &str =
    "https://fluxcd.io/flux/components/image/imageupdateautomations/#message-template";

/// Renders the commit message for the changes of one run.
pub fn render(
    template: &str,
    namespace: &str,
    name: &str,
    files: &[(String, ObjectChanges)],
    values: &BTreeMap<String, String>,
) -> Result<String, MessageError> {
    let template = if template.is_empty() {
        DEFAULT_MESSAGE
    } else {
        template
    };
    let mut funcs = tidegate_helm::sprig::funcs();
    for f in NON_HERMETIC {
        funcs.remove(f);
    }
    let mut set = Set::new("commit message", funcs);
    set.parse("commit message", template).map_err(|e| {
        MessageError::Failed(format!(
            "unable to create commit message template from spec: {e}"
        ))
    })?;
    let set = Rc::new(set);
    let data = Value::Object(Rc::new(TemplateData {
        namespace: namespace.to_string(),
        name: name.to_string(),
        result: Rc::new(ResultObject {
            files: files.to_vec(),
        }),
        values: values.clone(),
    }));
    set.execute("commit message", data, None).map_err(|e| {
        if e.contains("can't evaluate field Updated in type source.TemplateData") {
            MessageError::RemovedField(format!(
                "template uses removed '.Updated' field. Please use '.Changed' instead. See: {DOCS}"
            ))
        } else if e.contains("can't evaluate field ImageResult in type update.Result") {
            MessageError::RemovedField(format!(
                "template uses removed '.Changed.ImageResult' field. Please use '.Changed.FileChanges' or '.Changed.Objects' instead. See: {DOCS}"
            ))
        } else {
            MessageError::Failed(format!("failed to run template from spec: {e}"))
        }
    })
}

#[derive(Debug)]
struct TemplateData {
    namespace: String,
    name: String,
    result: Rc<ResultObject>,
    values: BTreeMap<String, String>,
}

impl Object for TemplateData {
    fn type_name(&self) -> String {
        "source.TemplateData".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "AutomationObject" => Some(Value::Object(Rc::new(NamespacedName {
                namespace: self.namespace.clone(),
                name: self.name.clone(),
            }))),
            "Changed" => Some(Value::Object(self.result.clone())),
            "Values" => Some(Value::Map(
                Rc::new(std::cell::RefCell::new(
                    self.values
                        .iter()
                        .map(|(k, v)| (k.clone(), Value::str(v)))
                        .collect(),
                )),
                MapKind::String,
            )),
            _ => None,
        }
    }
    fn fields(&self) -> Vec<(&'static str, Value)> {
        ["AutomationObject", "Changed", "Values"]
            .into_iter()
            .filter_map(|f| self.field(f).map(|v| (f, v)))
            .collect()
    }
    fn is_pointer(&self) -> bool {
        false
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[derive(Debug)]
struct NamespacedName {
    namespace: String,
    name: String,
}

impl Object for NamespacedName {
    fn type_name(&self) -> String {
        "types.NamespacedName".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Namespace" => Some(Value::str(&self.namespace)),
            "Name" => Some(Value::str(&self.name)),
            _ => None,
        }
    }
    fn method(self: Rc<Self>, name: &str) -> Option<Rc<Func>> {
        (name == "String").then(|| {
            let me = self.clone();
            Rc::new(Func::new(name, &[], None, move |_, _| {
                Ok(Value::str(&format!("{}/{}", me.namespace, me.name)))
            }))
        })
    }
    fn fields(&self) -> Vec<(&'static str, Value)> {
        vec![
            ("Namespace", Value::str(&self.namespace)),
            ("Name", Value::str(&self.name)),
        ]
    }
    fn is_pointer(&self) -> bool {
        false
    }
    fn string(&self) -> Option<String> {
        Some(format!("{}/{}", self.namespace, self.name))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `update.Result`.
#[derive(Debug)]
struct ResultObject {
    files: Vec<(String, ObjectChanges)>,
}

impl ResultObject {
    fn changes(&self) -> Vec<Change> {
        let mut out: Vec<Change> = Vec::new();
        for (_, objects) in &self.files {
            for (_, changes) in objects {
                for c in changes {
                    if !out.contains(c) {
                        out.push(c.clone());
                    }
                }
            }
        }
        out
    }

    fn objects(&self) -> ObjectChanges {
        let mut out: ObjectChanges = Vec::new();
        for (_, objects) in &self.files {
            for (id, changes) in objects {
                match out.iter_mut().find(|(i, _)| i == id) {
                    Some((_, list)) => list.extend(changes.iter().cloned()),
                    None => out.push((id.clone(), changes.clone())),
                }
            }
        }
        out
    }

    fn file_changes(&self) -> Value {
        Value::Map(
            Rc::new(std::cell::RefCell::new(
                self.files
                    .iter()
                    .map(|(f, o)| (f.clone(), object_changes(o.clone())))
                    .collect(),
            )),
            MapKind::Any,
        )
    }
}

impl Object for ResultObject {
    fn type_name(&self) -> String {
        "update.Result".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        (name == "FileChanges").then(|| self.file_changes())
    }
    fn method(self: Rc<Self>, name: &str) -> Option<Rc<Func>> {
        let me = self.clone();
        match name {
            "Changes" => Some(Rc::new(Func::new(name, &[], None, move |_, _| {
                Ok(Value::list(
                    me.changes()
                        .into_iter()
                        .map(|c| Value::Object(Rc::new(ChangeObject(c))))
                        .collect(),
                ))
            }))),
            "Objects" => Some(Rc::new(Func::new(name, &[], None, move |_, _| {
                Ok(object_changes(me.objects()))
            }))),
            _ => None,
        }
    }
    fn fields(&self) -> Vec<(&'static str, Value)> {
        vec![("FileChanges", self.file_changes())]
    }
    fn is_pointer(&self) -> bool {
        false
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn object_changes(mut changes: ObjectChanges) -> Value {
    // Go ranges over struct-keyed maps in no fixed order; `fmt` sorts them field by field.
    changes.sort_by(|a, b| {
        (&a.0.api_version, &a.0.kind, &a.0.name, &a.0.namespace).cmp(&(
            &b.0.api_version,
            &b.0.kind,
            &b.0.name,
            &b.0.namespace,
        ))
    });
    Value::Object(Rc::new(ObjectChangesObject(changes)))
}

/// `update.ObjectChanges`: a map keyed by object identifiers.
#[derive(Debug)]
struct ObjectChangesObject(ObjectChanges);

impl Object for ObjectChangesObject {
    fn type_name(&self) -> String {
        "update.ObjectChanges".into()
    }
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    fn keyed_entries(&self) -> Option<Vec<(Value, Value)>> {
        Some(
            self.0
                .iter()
                .map(|(id, changes)| {
                    (
                        Value::Object(Rc::new(Identifier(id.clone()))),
                        Value::list(
                            changes
                                .iter()
                                .map(|c| Value::Object(Rc::new(ChangeObject(c.clone()))))
                                .collect(),
                        ),
                    )
                })
                .collect(),
        )
    }
    fn is_pointer(&self) -> bool {
        false
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `update.ObjectIdentifier` (kyaml's `ResourceIdentifier`, its fields promoted).
#[derive(Debug)]
struct Identifier(ObjectIdentifier);

#[derive(Debug)]
struct Plain {
    type_name: &'static str,
    fields: Vec<(&'static str, Value)>,
}

impl Object for Plain {
    fn type_name(&self) -> String {
        self.type_name.into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        self.fields
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
    }
    fn fields(&self) -> Vec<(&'static str, Value)> {
        self.fields.clone()
    }
    fn is_pointer(&self) -> bool {
        false
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Identifier {
    fn type_meta(&self) -> Value {
        Value::Object(Rc::new(Plain {
            type_name: "yaml.TypeMeta",
            fields: vec![
                ("APIVersion", Value::str(&self.0.api_version)),
                ("Kind", Value::str(&self.0.kind)),
            ],
        }))
    }
    fn name_meta(&self) -> Value {
        Value::Object(Rc::new(Plain {
            type_name: "yaml.NameMeta",
            fields: vec![
                ("Name", Value::str(&self.0.name)),
                ("Namespace", Value::str(&self.0.namespace)),
            ],
        }))
    }
    fn resource_identifier(&self) -> Value {
        Value::Object(Rc::new(Plain {
            type_name: "yaml.ResourceIdentifier",
            fields: vec![
                ("TypeMeta", self.type_meta()),
                ("NameMeta", self.name_meta()),
            ],
        }))
    }
}

impl Object for Identifier {
    fn type_name(&self) -> String {
        "update.ObjectIdentifier".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "ResourceIdentifier" => Some(self.resource_identifier()),
            "TypeMeta" => Some(self.type_meta()),
            "NameMeta" => Some(self.name_meta()),
            "APIVersion" => Some(Value::str(&self.0.api_version)),
            "Kind" => Some(Value::str(&self.0.kind)),
            "Name" => Some(Value::str(&self.0.name)),
            "Namespace" => Some(Value::str(&self.0.namespace)),
            _ => None,
        }
    }
    fn fields(&self) -> Vec<(&'static str, Value)> {
        vec![("ResourceIdentifier", self.resource_identifier())]
    }
    fn is_pointer(&self) -> bool {
        false
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `update.Change`.
#[derive(Debug)]
struct ChangeObject(Change);

impl Object for ChangeObject {
    fn type_name(&self) -> String {
        "update.Change".into()
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "OldValue" => Some(Value::str(&self.0.old_value)),
            "NewValue" => Some(Value::str(&self.0.new_value)),
            "Setter" => Some(Value::str(&self.0.setter)),
            _ => None,
        }
    }
    fn fields(&self) -> Vec<(&'static str, Value)> {
        vec![
            ("OldValue", Value::str(&self.0.old_value)),
            ("NewValue", Value::str(&self.0.new_value)),
            ("Setter", Value::str(&self.0.setter)),
        ]
    }
    fn is_pointer(&self) -> bool {
        false
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value as J;

    fn files(v: &J) -> Vec<(String, ObjectChanges)> {
        let s = |v: &J| v.as_str().unwrap_or_default().to_string();
        v.as_object()
            .map(|m| {
                m.iter()
                    .map(|(file, objects)| {
                        let objects = objects
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|o| {
                                let id = ObjectIdentifier {
                                    api_version: s(&o["object"]["apiVersion"]),
                                    kind: s(&o["object"]["kind"]),
                                    name: s(&o["object"]["name"]),
                                    namespace: s(&o["object"]["namespace"]),
                                };
                                let changes = o["changes"]
                                    .as_array()
                                    .into_iter()
                                    .flatten()
                                    .map(|c| Change {
                                        old_value: s(&c["oldValue"]),
                                        new_value: s(&c["newValue"]),
                                        setter: s(&c["setter"]),
                                    })
                                    .collect();
                                (id, changes)
                            })
                            .collect();
                        (file.clone(), objects)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn flux_message_template_cases() {
        let data: J =
            serde_json::from_str(include_str!("testdata/message_templates.json")).expect("json");
        for case in data["cases"].as_array().expect("cases") {
            let name = case["name"].as_str().unwrap_or_default();
            let values: BTreeMap<String, String> =
                serde_json::from_value(case["values"].clone()).unwrap_or_default();
            let out = render(
                case["template"].as_str().unwrap_or_default(),
                "test-ns",
                "test-update",
                &files(&case["files"]),
                &values,
            );
            if let Some(expected) = case["expected"].as_str() {
                assert_eq!(out, Ok(expected.to_string()), "{name}");
            } else if let Some(m) = case["removedField"].as_str() {
                assert_eq!(out, Err(MessageError::RemovedField(m.into())), "{name}");
            } else {
                let out = out.unwrap_or_else(|e| panic!("{name}: {e}"));
                for c in case["contains"].as_array().expect("contains") {
                    let c = c.as_str().unwrap_or_default();
                    assert!(out.contains(c), "{name}: {c:?} not in {out:?}");
                }
            }
        }
    }

    #[test]
    fn changes_objects_and_hermetic_functions() {
        let f = files(&serde_json::json!({
            "a.yaml": [{"object": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "b"},
                "changes": [{"oldValue": "x:1", "newValue": "x:2", "setter": "ns:p"}]}],
            "b.yaml": [{"object": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "a"},
                "changes": [{"oldValue": "x:1", "newValue": "x:2", "setter": "ns:p"}]}]
        }));
        let t = "{{ range .Changed.Changes }}{{ .OldValue }}->{{ .NewValue }} ({{ .Setter }}){{ end }}|{{ len .Changed.Objects }}|{{ range $o, $c := .Changed.Objects }}{{ $o.Name }} {{ end }}|{{ .AutomationObject.Name }}|{{ upper \"ok\" }}";
        assert_eq!(
            render(t, "ns", "auto", &f, &BTreeMap::new()),
            Ok("x:1->x:2 (ns:p)|2|a b |auto|OK".to_string())
        );
        for f in ["now", "uuidv4", "randAlphaNum 3"] {
            let out = render(&format!("{{{{ {f} }}}}"), "ns", "a", &[], &BTreeMap::new());
            match out {
                Err(MessageError::Failed(m)) => assert!(
                    m.starts_with("unable to create commit message template from spec:")
                        && m.contains("not defined"),
                    "{m}"
                ),
                other => panic!("{f}: {other:?}"),
            }
        }
        let out = render("{{ .Changed.Nope }}", "ns", "a", &[], &BTreeMap::new());
        assert!(
            matches!(&out, Err(MessageError::Failed(m)) if m.starts_with("failed to run template from spec:")),
            "{out:?}"
        );
    }
}
