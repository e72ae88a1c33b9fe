/// Schema step 22: message actions (issue 31: reactions first).
///
/// An action is an item of its own — a row of `messages`, with its id, position, deliveries,
/// statuses, receipts and recovery like any — about another message of its conversation,
/// named by `target` (NULL for everything else). It is not shown as an item: the store's
/// pages, counts and unread counts leave such rows out (`messages_actions`, a partial index,
/// counts them without reading a row), and the read models fold them into their target
/// (`actions(conversation:targets:)`, `ReactionPolicy`). One whose target disappears goes with it.
enum SchemaActions {
    static let sql = """
    ALTER TABLE messages ADD COLUMN target BLOB CHECK (target IS NULL OR length(target) = 16);
    CREATE INDEX messages_actions ON messages (conversation_id, target) WHERE target IS NOT NULL;
    """
}
