//! The transformers of one kustomization level, in kustomize's fixed order, and the steps that
//! run once at the top (hashes, name references, vars, sort, build metadata).

pub(crate) mod crds;
pub(crate) mod generated;
pub(crate) mod hash;
pub(crate) mod images;
pub(crate) mod labels;
pub(crate) mod metadata;
pub(crate) mod nameref;
pub(crate) mod names;
pub(crate) mod namespace;
pub(crate) mod patch;
pub(crate) mod replacements;
pub(crate) mod replicas;
pub(crate) mod select;
pub(crate) mod smp;
pub(crate) mod sort;
pub(crate) mod vars;

use crate::error::Result;
use crate::plugins::Plugin;
use crate::target::{Accumulation, Builder, Level};

/// Runs a level's built-in transformers over everything accumulated so far: strategic merge
/// patches, patches, namespace, prefix, suffix, labels, annotations, JSON 6902 patches,
/// replicas, images, replacements.
/// Then the level's `transformers:` plugins, in order.
pub(crate) fn run(
    b: &Builder,
    level: &Level,
    acc: &mut Accumulation,
    plugins: &[Plugin],
) -> Result<()> {
    let k = &level.k;
    if !k.patches_strategic_merge.is_empty() {
        patch::strategic_merge_list(b, level, &mut acc.res)?;
        metadata::record(acc, level, "PatchStrategicMergeTransformer");
    }
    for p in &k.patches {
        patch::patch(b, level, p, &mut acc.res)?;
        metadata::record(acc, level, "PatchTransformer");
    }
    if let Some(ns) = k.namespace.as_deref().filter(|n| !n.is_empty()) {
        namespace::set(&mut acc.res, ns, &acc.config)?;
        metadata::record(acc, level, "NamespaceTransformer");
    }
    if let Some(p) = k.name_prefix.as_deref().filter(|n| !n.is_empty()) {
        names::add(&mut acc.res, p, "", &acc.config.name_prefix)?;
        metadata::record(acc, level, "PrefixTransformer");
    }
    if let Some(s) = k.name_suffix.as_deref().filter(|n| !n.is_empty()) {
        names::add(&mut acc.res, "", s, &acc.config.name_suffix)?;
        metadata::record(acc, level, "SuffixTransformer");
    }
    if !k.labels.is_empty() || !k.common_labels.is_empty() {
        for l in &k.labels {
            labels::labels_entry(&mut acc.res, l, &acc.config, &level.file)?;
            metadata::record(acc, level, "LabelTransformer");
        }
        labels::apply(&mut acc.res, &k.common_labels, &acc.config.common_labels)?;
        metadata::record(acc, level, "LabelTransformer");
    }
    if !k.common_annotations.is_empty() {
        labels::annotate(
            &mut acc.res,
            &k.common_annotations,
            &acc.config.common_annotations,
        )?;
        metadata::record(acc, level, "AnnotationsTransformer");
    }
    for p in &k.patches_json6902 {
        patch::json6902_entry(b, level, p, &mut acc.res)?;
        metadata::record(acc, level, "PatchJson6902Transformer");
    }
    for r in &k.replicas {
        replicas::set(&mut acc.res, r, &acc.config.replicas)?;
        metadata::record(acc, level, "ReplicaCountTransformer");
    }
    for i in &k.images {
        images::set(&mut acc.res, i, &acc.config.images)?;
        metadata::record(acc, level, "ImageTagTransformer");
    }
    if !k.replacements.is_empty() {
        replacements::run(b, level, &mut acc.res)?;
        metadata::record(acc, level, "ReplacementTransformer");
    }
    for p in plugins {
        p.transform(b, level, &mut acc.res)?;
        metadata::record_by(acc, &p.origin, &p.by);
    }
    Ok(())
}
