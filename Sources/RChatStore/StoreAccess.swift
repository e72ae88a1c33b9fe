import RChatSQL

/// Everything the store can do, available both on `Store` and inside `Store.transaction`,
/// so several operations (say, messages and the sealed state that decrypted them) commit
/// together. Each operation is atomic on its own as well.
public protocol StoreAccess {
    /// The connection underneath. For tests and diagnostics: the product uses the named
    /// operations, which keep the rules (and the triggers refuse the rest).
    var database: Database { get }
}

extension StoreAccess {
    /// All or nothing: a BEGIN IMMEDIATE transaction of its own (write lock first, so the
    /// read-then-write inside cannot fail half-way), or a savepoint inside the caller's
    /// transaction, so a failure undoes this operation only.
    func atomically<T>(_ body: () throws -> T) throws -> T {
        if database.isInTransaction { return try database.savepoint(body) }
        return try database.transaction(.immediate, body)
    }

    /// Several reads from one snapshot (a deferred transaction, unless one is open).
    func consistently<T>(_ body: () throws -> T) throws -> T {
        if database.isInTransaction { return try body() }
        return try database.transaction(.deferred, body)
    }

    /// Turns SQLite's constraint failures into the store's own errors.
    func translatingConstraints<T>(unique: StoreError? = nil, foreignKey: StoreError? = nil, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            if error.isUniqueViolation, let unique { throw unique }
            if error.isForeignKeyViolation, let foreignKey { throw foreignKey }
            throw error
        }
    }
}

/// The store inside one transaction (see `Store.transaction`).
public struct StoreTransaction: StoreAccess {
    public let database: Database
}
