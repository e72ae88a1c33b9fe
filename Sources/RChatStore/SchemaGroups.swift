/// Schema step 16: groups and their membership logs (issue 30; DESIGN.md §16; docs/PROTOCOL.md
/// "Group membership log").
///
/// - `groups`: a group conversation's id in the log (its create's id), its name as the log
///   folds it, and this side's standing in it (a member; or it left, or was removed: then
///   nothing more is written to it).
/// - `group_changes`: every change of its log this side holds, as received (the bytes its
///   author signed), taken (folded into the roster) or waiting for a parent. The roster is
///   folded again from them (`GroupLog`); `conversation_members` keeps what it folded to.
/// - `contacts.code`: the contact code as it was last entered, signed by its account: an admin
///   hands it on to the group's other members, who pin its keys from it.
/// - `contacts.kind`: 'member' for a person known only from a group's log (someone the adder
///   knew): a pairwise channel, no one-to-one conversation, never a request, not in the
///   contact list. Its `name_key` begins with U+0001 (which no name a person types can hold:
///   `ContactCode.validName`), then the account key in hex, so it never takes a contact's name.
enum SchemaGroups {
    static let sql = """
    CREATE TABLE groups (
        conversation_id INTEGER PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE CHECK (conversation_id < 0),
        group_id BLOB NOT NULL UNIQUE CHECK (length(group_id) = 32),
        name TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'current' CHECK (state IN ('current', 'left', 'removed')),
        created_at INTEGER NOT NULL
    ) STRICT;

    -- taken: 1 folded into the roster, 0 waiting for a parent not held yet.
    CREATE TABLE group_changes (
        conversation_id INTEGER NOT NULL REFERENCES groups(conversation_id) ON DELETE CASCADE,
        change_id BLOB NOT NULL CHECK (length(change_id) = 32),
        change BLOB NOT NULL CHECK (length(change) BETWEEN 1 AND 65536),
        taken INTEGER NOT NULL CHECK (taken IN (0, 1)),
        received_at INTEGER NOT NULL,
        PRIMARY KEY (conversation_id, change_id)
    ) STRICT, WITHOUT ROWID;

    ALTER TABLE contacts ADD COLUMN code TEXT;
    ALTER TABLE contacts ADD COLUMN kind TEXT NOT NULL DEFAULT 'contact' CHECK (kind IN ('contact', 'member'));

    -- A member known only from a group has no one-to-one conversation.
    DROP TRIGGER contacts_have_their_conversation;
    CREATE TRIGGER contacts_have_their_conversation
    AFTER INSERT ON contacts WHEN NEW.kind = 'contact'
    BEGIN
        INSERT INTO conversations (id, kind, created_at) VALUES (NEW.id, 'direct', NEW.added_at);
        INSERT INTO conversation_members (conversation_id, contact_id) VALUES (NEW.id, NEW.id);
    END;
    """
}
