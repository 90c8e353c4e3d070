//! The pre-push gate, with claims shared across machines.

use super::verdict::{Refusal, Verdict};
use crate::base::announce::{self, Announcement};
use crate::base::clock;
use crate::config::Config;
use crate::git::Repo;
use crate::ownership;
use crate::session;
use crate::store::Store;
use anyhow::Result;
use serde_json::json;

/// The pre-push gate (claims shared across machines): refuses a push whose new commits change
/// a path a session of another clone holds; a remote that cannot be asked is one warning, and the
/// push goes on (the commits were guarded when they were made).
pub fn pre_push(repo: &Repo, config: &Config, input: &str) -> Result<Verdict> {
    let Some(settings) = config.shared_claims() else {
        return Ok(Verdict::Pass);
    };
    let store = crate::store::Store::of(repo);
    let conflicts = match crate::shared_claims::gate(repo, &store, &settings, input)? {
        Ok(c) => c,
        Err(e) => {
            announce::emit(Announcement::PushNotChecked {
                remote: settings.remote.clone(),
                error: e.to_string(),
            });
            return Ok(Verdict::Pass);
        }
    };
    if conflicts.is_empty() {
        publish_pending(repo, config, &store, &settings);
        return Ok(Verdict::Pass);
    }
    store.audit(
        "push-refused",
        json!({"remote": settings.remote, "paths": conflicts.iter().map(|c| json!({"path": c.path, "commit": c.commit.to_string(), "owner": c.holder.label, "host": c.holder.host})).collect::<Vec<_>>()}),
    );
    Ok(Verdict::Refuse(Refusal::PushHeld {
        conflicts,
        remote: settings.remote.clone(),
    }))
}

/// Publishes this clone's claims made since the last sync (by commit, by an agent's edit) as
/// the push goes out; what cannot be published is a warning, never a refused push.
fn publish_pending(
    repo: &Repo,
    config: &Config,
    store: &Store,
    settings: &crate::shared_claims::Settings,
) {
    let mine: Vec<(String, String, clock::Time)> = session::load_all(store)
        .and_then(|records| ownership::claims_with_state(repo, config, &records))
        .map(|claims| {
            claims
                .into_iter()
                .filter(|(_, _, live)| *live)
                .map(|(label, c, _)| (label.to_string(), c.path.to_string(), c.since))
                .collect()
        })
        .unwrap_or_default();
    match crate::shared_claims::sync(repo, store, settings, &mine) {
        Ok(Ok(report)) => {
            // And this clone's port blocks, from what that sync fetched (`sync` says what is
            // lost of them; a push is not the place).
            if config.resources.ports > 0 {
                let _ = crate::shared_claims::leases::renew(repo, store, settings);
            }
            for (path, label, why) in &report.lost {
                announce::emit(Announcement::SharedClaimLost {
                    label: label.clone(),
                    path: path.clone(),
                    remote: settings.remote.clone(),
                    why: why.to_string(),
                });
            }
        }
        Ok(Err(e)) => announce::emit(Announcement::ClaimsNotPublished {
            error: e.to_string(),
        }),
        Err(e) => announce::emit(Announcement::ClaimsNotPublished {
            error: format!("{e:#}"),
        }),
    }
}
