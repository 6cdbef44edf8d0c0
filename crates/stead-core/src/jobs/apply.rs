//! `stead apply`: the plan that turns the stored jobs into the declared ones.
//!
//! Pure: it compares validated specs field by field and names what differs, so the
//! result can be shown (`--dry-run`) exactly as it will be carried out.

use stead_protocol::{ApplyResult, JobChange, JobSpec, NameChanges};

use crate::records::StoredJob;

/// The changes `apply` makes, in the order the store applies them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub create: Vec<JobSpec>,
    /// New spec, the fields that changed, and whether the schedule did.
    pub update: Vec<(JobSpec, Vec<String>, bool)>,
    pub remove: Vec<String>,
    pub unchanged: Vec<String>,
}

/// Compares the stored jobs with the declared ones (both validated).
pub fn plan(current: &[StoredJob], desired: &[JobSpec], prune: bool) -> Plan {
    let mut plan = Plan::default();
    for spec in desired {
        match current.iter().find(|j| j.spec.name == spec.name) {
            None => plan.create.push(spec.clone()),
            Some(stored) => {
                let fields = changed_fields(&stored.spec, spec);
                if fields.is_empty() {
                    plan.unchanged.push(spec.name.clone());
                } else {
                    // Re-enabling counts fires from now, as `stead job enable` does: the
                    // disabled stretch is not owed.
                    let schedule = fields
                        .iter()
                        .any(|f| matches!(f.as_str(), "cron" | "tz" | "every"))
                        || (fields.iter().any(|f| f == "enabled") && spec.enabled);
                    plan.update.push((spec.clone(), fields, schedule));
                }
            }
        }
    }
    if prune {
        plan.remove = current
            .iter()
            .filter(|j| !desired.iter().any(|d| d.name == j.spec.name))
            .map(|j| j.spec.name.clone())
            .collect();
    }
    plan
}

/// The names of the fields that differ, in declaration order.
pub fn changed_fields(old: &JobSpec, new: &JobSpec) -> Vec<String> {
    let old = serde_json::to_value(old).expect("specs serialize");
    let new = serde_json::to_value(new).expect("specs serialize");
    let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
        return Vec::new();
    };
    const ORDER: [&str; 11] = [
        "name",
        "cron",
        "tz",
        "every",
        "command",
        "shell",
        "cwd",
        "env",
        "timeout",
        "concurrency",
        "enabled",
    ];
    let mut fields: Vec<String> = ORDER
        .iter()
        .filter(|f| old.get(**f) != new.get(**f))
        .map(|f| f.to_string())
        .collect();
    // Fields added to the spec later still show up, after the known ones.
    for key in old.keys().chain(new.keys()) {
        if !ORDER.contains(&key.as_str()) && old.get(key) != new.get(key) && !fields.contains(key) {
            fields.push(key.clone());
        }
    }
    fields
}

impl Plan {
    /// The plan as the protocol reports it.
    pub fn result(&self, dry_run: bool) -> ApplyResult {
        ApplyResult {
            created: self.create.iter().map(|s| s.name.clone()).collect(),
            changed: self
                .update
                .iter()
                .map(|(spec, fields, _)| JobChange {
                    name: spec.name.clone(),
                    fields: fields.clone(),
                })
                .collect(),
            removed: self.remove.clone(),
            unchanged: self.unchanged.clone(),
            dry_run,
            ..ApplyResult::default()
        }
    }
}

/// How the stored items of one kind (services, queues, notifiers) compare with the
/// declared ones, by name: what to create, what to change and, with `prune`, what to
/// remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named<T> {
    pub create: Vec<T>,
    pub update: Vec<T>,
    pub remove: Vec<String>,
    /// The same, by name, as `apply` reports it.
    pub report: NameChanges,
}

/// Compares `current` with `desired` (both validated), naming each by `name`.
pub fn named<T: Clone + PartialEq>(
    current: &[T],
    desired: &[T],
    prune: bool,
    name: impl Fn(&T) -> &str,
) -> Named<T> {
    let mut named = Named {
        create: Vec::new(),
        update: Vec::new(),
        remove: Vec::new(),
        report: NameChanges::default(),
    };
    for item in desired {
        let id = name(item).to_string();
        match current.iter().find(|c| name(c) == id) {
            None => {
                named.create.push(item.clone());
                named.report.created.push(id);
            }
            Some(stored) if stored == item => named.report.unchanged.push(id),
            Some(_) => {
                named.update.push(item.clone());
                named.report.changed.push(id);
            }
        }
    }
    if prune {
        for stored in current {
            let id = name(stored);
            if !desired.iter().any(|d| name(d) == id) {
                named.remove.push(id.to_string());
                named.report.removed.push(id.to_string());
            }
        }
    }
    named
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use jiff::Timestamp;

    use super::*;

    fn spec(name: &str, cmd: &str) -> JobSpec {
        JobSpec {
            name: name.into(),
            cron: Some("0 20 * * *".into()),
            tz: Some("UTC".into()),
            every: None,
            command: vec![cmd.into()],
            shell: false,
            cwd: None,
            env: BTreeMap::new(),
            timeout: None,
            concurrency: Default::default(),
            enabled: true,
            ..JobSpec::default()
        }
    }

    fn stored(spec: JobSpec) -> StoredJob {
        StoredJob {
            id: 1,
            spec,
            created_at: Timestamp::UNIX_EPOCH,
            updated_at: Timestamp::UNIX_EPOCH,
            anchor: Timestamp::UNIX_EPOCH,
            fired_through: None,
            paused_until: None,
            overdue_since: None,
        }
    }

    #[test]
    fn creates_changes_removes_and_leaves_alone() {
        let current = vec![
            stored(spec("same", "true")),
            stored(spec("edited", "true")),
            stored(spec("gone", "true")),
        ];
        let mut edited = spec("edited", "false");
        edited.cron = Some("0 21 * * *".into());
        let desired = vec![spec("same", "true"), edited, spec("new", "true")];

        let p = plan(&current, &desired, false);
        assert_eq!(p.create.len(), 1);
        assert_eq!(p.unchanged, ["same"]);
        assert_eq!(p.update.len(), 1);
        assert_eq!(p.update[0].1, ["cron", "command"]);
        assert!(p.update[0].2, "a cron change is a schedule change");
        assert!(p.remove.is_empty(), "nothing is removed without prune");

        let p = plan(&current, &desired, true);
        assert_eq!(p.remove, ["gone"]);
        let r = p.result(true);
        assert_eq!(r.created, ["new"]);
        assert_eq!(r.changed[0].name, "edited");
        assert!(r.dry_run);
    }

    #[test]
    fn applying_twice_changes_nothing_the_second_time() {
        let desired = vec![spec("a", "true"), spec("b", "true")];
        let current: Vec<StoredJob> = desired.iter().cloned().map(stored).collect();
        let p = plan(&current, &desired, true);
        assert!(p.create.is_empty() && p.update.is_empty() && p.remove.is_empty());
        assert_eq!(p.unchanged, ["a", "b"]);
    }

    #[test]
    fn a_command_change_is_not_a_schedule_change() {
        let current = vec![stored(spec("a", "true"))];
        let p = plan(&current, &[spec("a", "false")], false);
        assert_eq!(p.update[0].1, ["command"]);
        assert!(!p.update[0].2);
    }

    #[test]
    fn named_items_are_created_changed_kept_and_with_prune_removed() {
        let current = [("db", 1), ("cache", 2), ("old", 3)];
        let desired = [("db", 1), ("cache", 5), ("new", 4)];
        fn by_name<'a>(item: &'a (&'static str, i32)) -> &'a str {
            item.0
        }
        let kept = named(&current, &desired, false, by_name);
        assert_eq!(kept.create, [("new", 4)]);
        assert_eq!(kept.update, [("cache", 5)]);
        assert!(kept.remove.is_empty());
        assert_eq!(kept.report.unchanged, ["db"]);
        let pruned = named(&current, &desired, true, by_name);
        assert_eq!(pruned.remove, ["old"]);
        assert_eq!(pruned.report.removed, ["old"]);
        assert_eq!(pruned.report.created, ["new"]);
        assert_eq!(pruned.report.changed, ["cache"]);
    }
}
