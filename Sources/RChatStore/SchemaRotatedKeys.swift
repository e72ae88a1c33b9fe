/// Schema step 20: the account key a contact rotated away from (issue 30: a member who
/// rotates their keys stays in each group).
///
/// - `contacts.previous_account_key`: set when a contact's rotation was taken (their old key
///   vouched for the new one, in a session with the device pinned for them), NULL before
///   any. A group's log may still name them by it (its rekey change not here yet), so a
///   roster maps to them by either key (`contact(anyAccountKey:)`), never to a second row.
enum SchemaRotatedKeys {
    static let sql = """
    ALTER TABLE contacts ADD COLUMN previous_account_key BLOB
        CHECK (previous_account_key IS NULL OR length(previous_account_key) = 32);
    CREATE INDEX contacts_by_previous_key ON contacts (previous_account_key) WHERE previous_account_key IS NOT NULL;
    """
}
