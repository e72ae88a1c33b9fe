/// Schema step 2: an account can move to a new mailbox (`keys rotate`). The previous
/// mailbox's seed is kept while relays may still hold something for it (72 h), so the
/// engine can hand it over to the new one (`moveMailbox` in the relay protocol).
enum SchemaV2 {
    static let sql = """
    ALTER TABLE account ADD COLUMN previous_mailbox_seed BLOB;
    ALTER TABLE account ADD COLUMN mailbox_moved_at INTEGER;
    """
}
