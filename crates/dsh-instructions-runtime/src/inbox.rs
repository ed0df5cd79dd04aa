//! The next-step inbox an instance keeps for its pending workspace message.

use crate::host::WorkspaceMessage;

/// Identifier of an item in the inbox.
pub(crate) type InboxId = u64;

/// The next-step inbox of one loop instance (R-RT-2, R-RT-7): memory only,
/// so it belongs to the instance, not to the host. Ids are never reused, so
/// an id a projection read before a later change cannot reach a newer
/// message.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Inbox {
    items: Vec<(InboxId, WorkspaceMessage)>,
    last_id: InboxId,
}

impl Inbox {
    /// Pending messages with their ids, in inbox order (front first).
    pub(crate) fn pending(&self) -> &[(InboxId, WorkspaceMessage)] {
        &self.items
    }

    /// Pending messages without their ids, in inbox order.
    pub(crate) fn messages(&self) -> impl Iterator<Item = &WorkspaceMessage> {
        self.items.iter().map(|(_, m)| m)
    }

    /// Puts `message` at the front and returns its fresh id.
    pub(crate) fn prepend(&mut self, message: WorkspaceMessage) -> InboxId {
        // Wrapping only after 2^64 prepends; never a panic.
        self.last_id = self.last_id.wrapping_add(1);
        self.items.insert(0, (self.last_id, message));
        self.last_id
    }

    /// Replaces the message with this id in place; an id no longer pending
    /// changes nothing.
    pub(crate) fn replace(&mut self, id: InboxId, message: WorkspaceMessage) {
        if let Some(slot) = self.items.iter_mut().find(|(i, _)| *i == id) {
            slot.1 = message;
        }
    }

    /// Removes the message with this id, if pending.
    pub(crate) fn remove(&mut self, id: InboxId) {
        self.items.retain(|(i, _)| *i != id);
    }

    /// Drops every pending message (ids keep counting).
    #[cfg(test)]
    pub(crate) fn clear(&mut self) {
        self.items.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_instructions_state::TypedSource;
    use rstest::rstest;

    fn msg(text: &str) -> WorkspaceMessage {
        WorkspaceMessage {
            parts: vec![text.to_owned()],
            blocks: Vec::new(),
            source: TypedSource::default(),
        }
    }

    fn texts(inbox: &Inbox) -> Vec<String> {
        inbox
            .messages()
            .map(WorkspaceMessage::joined_text)
            .collect()
    }

    /// One inbox operation; ids are referred to by the order they were
    /// handed out (0 = first prepend).
    #[derive(Debug, Clone, Copy)]
    enum Op {
        Prepend(&'static str),
        Replace(usize, &'static str),
        Remove(usize),
        Clear,
    }

    #[rstest]
    #[case::newest_first(&[Op::Prepend("a"), Op::Prepend("b")], &["b", "a"])]
    #[case::replace_in_place(&[Op::Prepend("a"), Op::Prepend("b"), Op::Replace(0, "a2")], &["b", "a2"])]
    #[case::remove_one(&[Op::Prepend("a"), Op::Prepend("b"), Op::Remove(1)], &["a"])]
    #[case::replace_after_remove_is_a_no_op(&[Op::Prepend("a"), Op::Remove(0), Op::Replace(0, "x")], &[])]
    #[case::remove_twice_is_a_no_op(&[Op::Prepend("a"), Op::Prepend("b"), Op::Remove(0), Op::Remove(0)], &["b"])]
    #[case::stale_id_after_clear_misses_the_new_message(&[Op::Prepend("a"), Op::Clear, Op::Prepend("b"), Op::Replace(0, "x"), Op::Remove(0)], &["b"])]
    fn inbox_operations(#[case] ops: &[Op], #[case] want: &[&str]) {
        let mut inbox = Inbox::default();
        let mut ids = Vec::new();
        for op in ops {
            match *op {
                Op::Prepend(t) => ids.push(inbox.prepend(msg(t))),
                Op::Replace(n, t) => inbox.replace(ids[n], msg(t)),
                Op::Remove(n) => inbox.remove(ids[n]),
                Op::Clear => inbox.clear(),
            }
        }
        assert_eq!(texts(&inbox), want);
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "ids are never reused: {ids:?}");
    }
}
