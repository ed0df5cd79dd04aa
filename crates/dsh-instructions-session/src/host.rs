//! [`LogHost`]: the runtime's [`Host`] over an open session log.

use std::sync::{Mutex, MutexGuard};

use camino::Utf8PathBuf;
use dsh_instructions_runtime::{
    BatchEntry, Host, ToolExecution, WorkspaceMessage,
    host_support::{ViewSnapshot, VisibleMark, VisibleUpdate},
};
use dsh_instructions_state::TypedSource;
use dsh_session_log::{Event, EventKind, LogError, SessionLog, SurfaceSummary, VisibleSource};

use crate::touch::{self, Replay};
use crate::views;

/// A [`Host`] over a session log: the visible workspace state and step
/// gating come from the log's surface (R-LOG-1). The next-step inbox is the
/// mounted instance's, in memory only, as SPEC R-RT-7 says (it does not
/// survive a resume).
///
/// The visible sources are read from the log's summary on demand, and only
/// those a caller asks for are parsed: [`Host::visible_since`] from a mark
/// parses what was appended after it. A mark is (compactions so far, visible
/// entries of the summary), so it means the same in every process over the
/// log; the fold an instance offers ([`Host::save_view`]) is kept in
/// `view.json` beside the log when the log is closed (still under the
/// session lock), and the next process starts from it
/// ([`Host::saved_view`]) instead of folding every visible message again
/// (R-LOG-5, R-HOOK-6).
#[derive(Debug)]
pub struct LogHost {
    cwd: Utf8PathBuf,
    path: Utf8PathBuf,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// `None` once [`LogHost::close`] released the log and its lock.
    log: Option<SessionLog>,
    /// The summary of the closed log: the visible state stays readable.
    closed: Option<SurfaceSummary>,
    /// The latest fold an instance offered, written at close.
    offered: Option<(ViewSnapshot, VisibleMark)>,
}

impl State {
    fn summary(&self) -> Option<&SurfaceSummary> {
        self.log
            .as_ref()
            .map(SessionLog::summary)
            .or(self.closed.as_ref())
    }

    fn entries(&self) -> &[VisibleSource] {
        self.summary().map_or(&[], SurfaceSummary::workspace)
    }

    /// The mark of the surface now.
    fn mark(&self) -> VisibleMark {
        VisibleMark {
            generation: self.summary().map_or(0, SurfaceSummary::compactions),
            len: self.entries().len(),
        }
    }

    /// The typed sources among `entries` (R-LOG-3: a source this version
    /// cannot read is not ours), with their sequence numbers.
    fn typed(entries: &[VisibleSource]) -> impl Iterator<Item = (u64, TypedSource)> + '_ {
        entries.iter().filter_map(|w| {
            let value = w.source.to_value();
            Some((w.seq, TypedSource::from_json(&value)?))
        })
    }
}

impl LogHost {
    /// Wraps an open log; the session cwd comes from its header.
    pub fn new(log: SessionLog) -> Self {
        let cwd = Utf8PathBuf::from(log.header().cwd.clone());
        let path = log.path().to_owned();
        Self {
            cwd,
            path,
            state: Mutex::new(State {
                log: Some(log),
                closed: None,
                offered: None,
            }),
        }
    }

    /// Closes the log now, releasing the session lock (R-LOG-4), even while
    /// other handles on this host are still alive (an instance's lane drops
    /// its handle only when its task next runs). The fold an instance
    /// offered is written first, still under the lock. Later appends fail;
    /// the visible state stays readable.
    pub fn close(&self) {
        let mut s = self.lock();
        let Some(log) = s.log.take() else { return };
        if let Some((view, mark)) = s.offered.take() {
            let kept = views::Kept::of(log.summary(), view, mark);
            if let Some(kept) = kept
                && let Err(error) = views::store(&views::path_for(&self.path), &kept)
            {
                tracing::debug!(%error, "the visible fold was not saved");
            }
        }
        s.closed = Some(log.into_summary());
    }

    fn closed(&self) -> LogError {
        LogError::Io {
            op: "append",
            path: self.path.clone(),
            source: std::io::Error::other("the session was closed"),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends one event (durably, see `dsh_session_log`) and returns its
    /// sequence number.
    ///
    /// # Errors
    /// What [`SessionLog::append`] reports.
    pub fn append(&self, kind: EventKind) -> Result<u64, LogError> {
        let mut s = self.lock();
        let Some(log) = s.log.as_mut() else {
            drop(s);
            return Err(self.closed());
        };
        log.append(kind)
    }

    /// Appends an entered batch in order; workspace messages keep their typed
    /// source verbatim (R-LOG-3), host messages are user text.
    ///
    /// # Errors
    /// What [`SessionLog::append`] reports; entries before the failing one
    /// are persisted.
    pub fn append_batch(&self, batch: &[BatchEntry<String>]) -> Result<(), LogError> {
        for entry in batch {
            self.append(match entry {
                BatchEntry::Host(text) => EventKind::Message {
                    role: "user".into(),
                    parts: vec![text.clone()],
                    source: None,
                },
                BatchEntry::Workspace(m) => workspace_event(m),
            })?;
        }
        Ok(())
    }

    /// Every event of the log, in order: a whole read of the file, for
    /// viewers and tests (the host itself never needs it).
    ///
    /// # Errors
    /// When the file cannot be read.
    pub fn events(&self) -> Result<Vec<Event>, LogError> {
        match &self.lock().log {
            Some(log) => log.events(),
            None => Err(self.closed()),
        }
    }

    /// The workspace messages on the visible surface: sequence number and
    /// persisted source JSON (which may carry fields of the caller's own,
    /// such as the hook event that delivered it).
    pub fn visible_workspace_sources(&self) -> Vec<(u64, serde_json::Value)> {
        let s = self.lock();
        s.entries()
            .iter()
            .filter_map(|w| {
                let value = w.source.to_value();
                TypedSource::from_json(&value).map(|_| (w.seq, value))
            })
            .collect()
    }

    /// Sequence numbers of the workspace messages on the visible surface.
    pub fn visible_workspace_seqs(&self) -> Vec<u64> {
        State::typed(self.lock().entries())
            .map(|(seq, _)| seq)
            .collect()
    }

    /// The tool executions and touches recorded after the last persisted
    /// message or `settled` marker, in log order: they made the pending
    /// message an earlier process held and lost with its inbox.
    pub(crate) fn replay_since_last_message(&self) -> Vec<Replay> {
        match &self.lock().log {
            Some(log) => replays(
                log.summary().tools_since_message(),
                log.header().touch_events,
            ),
            None => Vec::new(),
        }
    }
}

/// The log event that persists an entered workspace message.
pub(crate) fn workspace_event(m: &WorkspaceMessage) -> EventKind {
    EventKind::Message {
        role: "user".into(),
        parts: m.parts.clone(),
        source: Some(m.source.to_json()),
    }
}

impl Host for LogHost {
    fn cwd(&self) -> Utf8PathBuf {
        self.cwd.clone()
    }

    fn visible_workspace(&self) -> Vec<TypedSource> {
        State::typed(self.lock().entries())
            .map(|(_, source)| source)
            .collect()
    }

    fn visible_since(&self, mark: Option<VisibleMark>) -> (VisibleUpdate, Option<VisibleMark>) {
        let s = self.lock();
        let now = s.mark();
        let entries = s.entries();
        let update = match mark {
            // Between compactions the summary's visible entries only grow.
            Some(m) if m.generation == now.generation && m.len <= now.len => {
                VisibleUpdate::Appended(State::typed(&entries[m.len..]).map(|(_, t)| t).collect())
            }
            _ => VisibleUpdate::Whole(State::typed(entries).map(|(_, t)| t).collect()),
        };
        (update, Some(now))
    }

    fn saved_view(&self) -> Option<(ViewSnapshot, VisibleMark)> {
        let s = self.lock();
        let kept = views::load(&views::path_for(&self.path))?;
        kept.still_describes(s.entries(), s.mark())
    }

    fn keeps_views(&self) -> bool {
        true
    }

    fn save_view(&self, view: ViewSnapshot, mark: VisibleMark) {
        self.lock().offered = Some((view, mark));
    }

    fn step_open(&self) -> bool {
        self.lock()
            .log
            .as_ref()
            .is_some_and(|log| log.summary().step_open())
    }
}

/// The typed source a workspace message was persisted with; `None` for
/// other events and for a source this version cannot read.
pub fn typed_source(e: &Event) -> Option<TypedSource> {
    match &e.kind {
        EventKind::Message {
            source: Some(v), ..
        } => TypedSource::from_json(v),
        _ => None,
    }
}

/// The tool and touch events of `events` as what a mount reports again.
/// In a log created before touches had their own event (`touch_events`
/// unset), a `tool` event named `touch` is a touch (decision 0054); in a
/// newer log it is the tool call it says.
fn replays(events: &[Event], touch_events: bool) -> Vec<Replay> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Tool {
                name,
                args,
                ok,
                cancelled,
                token,
                parent,
            } => {
                let exec = ToolExecution {
                    name: name.clone(),
                    arguments: args.clone(),
                    token: token.clone().unwrap_or_else(|| format!("seq-{}", e.seq)),
                    parent: parent.clone(),
                    is_error: !ok,
                    cancelled: *cancelled,
                };
                let legacy = (!touch_events)
                    .then(|| touch::legacy_touch(&exec))
                    .flatten();
                Some(match legacy {
                    Some((path, kind)) => Replay::Touch(path, kind),
                    None => Replay::Tool(exec),
                })
            }
            EventKind::Touch {
                path,
                kind,
                command,
                ..
            } => {
                let touch = touch::touch_of(path, Some(kind), command.as_deref());
                if touch.is_none() {
                    tracing::debug!(seq = e.seq, "a shell touch without its command is skipped");
                }
                touch.map(|kind| Replay::Touch(Utf8PathBuf::from(path), kind))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn ws(baseline: bool) -> EventKind {
        workspace_event(&WorkspaceMessage {
            parts: vec!["x".into()],
            blocks: Vec::new(),
            source: TypedSource {
                baseline,
                baseline_identity: None,
                changes: Vec::new(),
            },
        })
    }

    fn tool(token: &str) -> EventKind {
        EventKind::Tool {
            name: "read".into(),
            args: json!({"file_path": "a"}),
            ok: true,
            cancelled: false,
            token: Some(token.into()),
            parent: None,
        }
    }

    fn log_host() -> (tempfile::TempDir, LogHost) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = camino::Utf8Path::from_path(tmp.path())
            .expect("utf-8")
            .join("s");
        let log = SessionLog::create(&dir, dsh_session_log::SessionHeader::new("s", "/work/repo"))
            .expect("create");
        (tmp, LogHost::new(log))
    }

    #[test]
    fn only_tools_after_the_last_message_are_replayed() {
        let (_tmp, host) = log_host();
        host.append(tool("old")).expect("append");
        host.append(ws(true)).expect("append");
        host.append(tool("a")).expect("append");
        host.append(EventKind::TurnEnd).expect("append");
        host.append(tool("b")).expect("append");
        let tokens: Vec<String> = host
            .replay_since_last_message()
            .into_iter()
            .map(|r| match r {
                Replay::Tool(t) => t.token,
                Replay::Touch(..) => panic!("no touch was kept"),
            })
            .collect();
        assert_eq!(tokens, ["a", "b"]);
    }

    /// Decision 0054: whether a `tool` event named `touch` is a touch is the
    /// log's header's word, and a `touch` event always is one.
    #[rstest]
    #[case::this_builds_log(true, false)]
    #[case::an_earlier_builds_log(false, true)]
    fn a_tool_named_touch_is_a_touch_only_in_an_old_log(
        #[case] touch_events: bool,
        #[case] is_touch: bool,
    ) {
        let event = |seq, kind| Event { seq, kind };
        let named_touch = EventKind::Tool {
            name: "touch".into(),
            args: json!({"path": "a.txt"}),
            ok: true,
            cancelled: false,
            token: Some("k".into()),
            parent: None,
        };
        let typed = crate::touch::touch_event(
            camino::Utf8Path::new("pkg"),
            &dsh_instructions_runtime::TouchKind::List,
            "t".into(),
        );
        let got = replays(&[event(1, named_touch), event(2, typed)], touch_events);
        assert_eq!(matches!(got[0], Replay::Touch(..)), is_touch, "{got:?}");
        assert_eq!(
            got[1],
            Replay::Touch("pkg".into(), dsh_instructions_runtime::TouchKind::List)
        );
    }

    #[rstest]
    #[case(vec![], false)]
    #[case(vec![EventKind::StepStart], true)]
    #[case(vec![EventKind::StepStart, EventKind::StepEnd], false)]
    #[case(vec![EventKind::StepStart, tool("t")], true)]
    fn step_gating_is_seeded_from_the_log(#[case] kinds: Vec<EventKind>, #[case] open: bool) {
        let (_tmp, host) = log_host();
        for k in kinds {
            host.append(k).expect("append");
        }
        assert_eq!(host.step_open(), open);
    }

    #[test]
    fn a_source_that_is_not_ours_is_not_visible() {
        let (_tmp, host) = log_host();
        host.append(EventKind::Message {
            role: "user".into(),
            parts: vec!["x".into()],
            source: Some(json!({"kind": "other", "baseline": true})),
        })
        .expect("append");
        assert!(host.visible_workspace().is_empty());
        assert!(host.visible_workspace_sources().is_empty());
        let ours = host.append(ws(false)).expect("append");
        let sources: Vec<u64> = host
            .visible_workspace_sources()
            .into_iter()
            .map(|(seq, _)| seq)
            .collect();
        assert_eq!(sources, [ours], "only our source, by its seq");
        assert_eq!(host.visible_workspace_seqs(), [ours]);
        // After a reopen the same, from the summary.
        let path = host.path.clone();
        host.close();
        let (log, _) = SessionLog::open(&path).expect("reopen");
        let reopened = LogHost::new(log);
        assert_eq!(reopened.visible_workspace_seqs(), [ours]);
        assert_eq!(reopened.visible_workspace_sources().len(), 1);
    }

    #[test]
    fn visible_sources_follow_appends_and_compactions() {
        let (_tmp, host) = log_host();
        assert_eq!(host.cwd(), "/work/repo");
        let (_, mark) = host.visible_since(None);
        let first = host.append(ws(true)).expect("append");
        host.append(EventKind::Message {
            role: "user".into(),
            parts: vec!["hi".into()],
            source: None,
        })
        .expect("append");
        host.append(ws(false)).expect("append");
        let (update, mark) = host.visible_since(mark);
        assert!(matches!(update, VisibleUpdate::Appended(ref v) if v.len() == 2));
        assert_eq!(host.visible_workspace_seqs(), [first, first + 2]);
        host.append(EventKind::Compaction { hide: vec![first] })
            .expect("append");
        let (update, _) = host.visible_since(mark);
        let VisibleUpdate::Whole(now) = update else {
            panic!("a compaction must not be reported as an append")
        };
        assert_eq!(now.len(), 1);
        assert!(!now[0].baseline, "the hidden baseline no longer counts");
        assert_eq!(host.visible_workspace(), now);
    }

    #[test]
    fn a_reopened_log_shows_the_same_visible_state() {
        let (_tmp, host) = log_host();
        let first = host.append(ws(true)).expect("append");
        host.append(ws(false)).expect("append");
        host.append(EventKind::Compaction { hide: vec![first] })
            .expect("append");
        let before = host.visible_workspace();
        let path = host.path.clone();
        let held = std::sync::Arc::new(host);
        let _lane = held.clone(); // as an instance's lane would
        held.close();
        let (log, _) = SessionLog::open(&path).expect("reopen");
        assert_eq!(LogHost::new(log).visible_workspace(), before);
    }

    fn reopen(path: &camino::Utf8Path) -> LogHost {
        let (log, _) = SessionLog::open(path).expect("reopen");
        LogHost::new(log)
    }

    fn kept(text: &str) -> ViewSnapshot {
        ViewSnapshot::from_json(text.into())
    }

    #[test]
    fn a_reopened_host_offers_the_fold_its_predecessor_kept() {
        let (_tmp, host) = log_host();
        host.append(ws(true)).expect("append");
        host.append(ws(false)).expect("append");
        let (_, mark) = host.visible_since(None);
        let mark = mark.expect("log hosts mark");
        host.save_view(kept(r#"{"n":1}"#), mark);
        host.append(ws(false)).expect("append after the mark");
        let path = host.path.clone();
        host.close();
        let reopened = reopen(&path);
        let (view, at) = reopened.saved_view().expect("the kept fold");
        assert_eq!((view.json(), at), (r#"{"n":1}"#, mark));
        let (update, _) = reopened.visible_since(Some(at));
        assert!(
            matches!(update, VisibleUpdate::Appended(ref v) if v.len() == 1),
            "only the message after the mark is folded: {update:?}"
        );
    }

    #[test]
    fn a_kept_fold_is_not_offered_after_a_compaction() {
        let (_tmp, host) = log_host();
        let first = host.append(ws(true)).expect("append");
        let (_, mark) = host.visible_since(None);
        host.save_view(kept("{}"), mark.expect("mark"));
        let path = host.path.clone();
        host.close();
        let reopened = reopen(&path);
        assert!(reopened.saved_view().is_some());
        reopened
            .append(EventKind::Compaction { hide: vec![first] })
            .expect("append");
        assert!(reopened.saved_view().is_none());
    }

    #[test]
    fn a_kept_fold_of_another_log_is_not_offered() {
        // The same number of visible messages, other sources: the copied
        // file's last covered entry is not this log's.
        let (_tmp, host) = log_host();
        host.append(ws(true)).expect("append");
        let (_, mark) = host.visible_since(None);
        host.save_view(kept("{}"), mark.expect("mark"));
        let path = host.path.clone();
        host.close();
        let (_tmp2, other) = log_host();
        other.append(ws(false)).expect("append");
        let other_path = other.path.clone();
        other.close();
        std::fs::copy(
            crate::views::path_for(&path),
            crate::views::path_for(&other_path),
        )
        .expect("copy");
        assert!(
            reopen(&path).saved_view().is_some(),
            "its own log accepts it"
        );
        assert!(reopen(&other_path).saved_view().is_none());
    }

    #[rstest]
    #[case::garbage("not json")]
    #[case::other_version(r#"{"format":"dsh-session-view","version":2,"compactions":0,"len":0,"last":null,"view":{}}"#)]
    #[case::past_the_log(r#"{"format":"dsh-session-view","version":1,"compactions":0,"len":5,"last":null,"view":{}}"#)]
    fn an_unusable_view_file_is_not_offered(#[case] text: &str) {
        let (_tmp, host) = log_host();
        let path = host.path.clone();
        host.close();
        let control = r#"{"format":"dsh-session-view","version":1,"compactions":0,"len":0,"last":null,"view":{}}"#;
        std::fs::write(crate::views::path_for(&path), control).expect("write");
        assert!(
            reopen(&path).saved_view().is_some(),
            "the well-formed control is used"
        );
        std::fs::write(crate::views::path_for(&path), text).expect("write");
        assert!(reopen(&path).saved_view().is_none());
    }

    #[test]
    fn nothing_is_kept_without_an_offer() {
        let (_tmp, host) = log_host();
        host.append(ws(true)).expect("append");
        let path = host.path.clone();
        host.close();
        assert!(!crate::views::path_for(&path).exists());
    }

    #[test]
    fn appended_batches_keep_the_typed_source_verbatim() {
        let (_tmp, host) = log_host();
        let source = TypedSource {
            baseline: true,
            baseline_identity: Some("id".into()),
            changes: Vec::new(),
        };
        host.append_batch(&[
            BatchEntry::Host("hi".to_owned()),
            BatchEntry::Workspace(WorkspaceMessage {
                parts: vec!["<system-reminder>…</system-reminder>".into()],
                blocks: Vec::new(),
                source: source.clone(),
            }),
        ])
        .expect("append");
        let events = host.events().expect("events");
        assert!(
            matches!(&events[0].kind, EventKind::Message { source: None, parts, .. } if parts == &["hi"])
        );
        let EventKind::Message {
            source: Some(v), ..
        } = &events[1].kind
        else {
            panic!("workspace message not persisted with a source")
        };
        assert_eq!(v, &source.to_json());
        assert_eq!(host.visible_workspace(), [source]);
    }
}
