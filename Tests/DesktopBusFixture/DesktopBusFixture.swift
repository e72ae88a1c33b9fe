import Foundation
import CGio

/// A private session bus for a test: a real `dbus-daemon` of its own (its socket in a
/// folder of the test), stopped by its pid. Nothing on it but what the test puts there.
public final class PrivateSessionBus {
    public let address: String
    let daemon: Process

    /// Starts it, its socket and configuration in `directory`; ready when its address is printed.
    public init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let config = "\(directory)/session.conf"
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:dir=\(directory)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """.write(toFile: config, atomically: true, encoding: .utf8)
        daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        daemon.arguments = ["--config-file=\(config)", "--nofork", "--nopidfile", "--print-address=1"]
        let output = Pipe()
        daemon.standardOutput = output
        daemon.standardError = FileHandle.nullDevice
        daemon.standardInput = FileHandle.nullDevice
        try daemon.run()
        // The address is printed once the bus listens (or nothing, if it failed: EOF).
        var printed = Data()
        while !printed.contains(10) {
            let part = output.fileHandleForReading.availableData
            if part.isEmpty { break }
            printed.append(part)
        }
        address = String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !address.isEmpty else {
            stop()
            throw FixtureError("dbus-daemon printed no address")
        }
    }

    /// Stops the daemon (its pid only), waiting for it.
    public func stop() {
        guard daemon.isRunning else { return }
        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
    }

    deinit { stop() }
}

public struct FixtureError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A notification service on a bus (`org.freedesktop.Notifications`, the methods rChat
/// calls): every `Notify` is recorded with what it carried and given the next id, every
/// `CloseNotification` recorded; `click` invokes a notification's default action as a
/// desktop does when it is clicked. Runs its own main context on a thread of its own.
public final class NotificationServer: @unchecked Sendable {
    /// One `Notify` call.
    public struct Notification: Equatable, Sendable {
        public let id: UInt32
        public let appName: String
        public let title: String
        public let body: String
        public let actions: [String]
        /// The caller's unique name on the bus (signals for it go there).
        public let sender: String
    }

    private let lock = NSLock()
    private var shown: [Notification] = []
    private var closedIDs: [UInt32] = []
    private var nextID: UInt32 = 41
    private var running = true
    private var connection: OpaquePointer?
    private var thread: Thread?
    private let ready = DispatchSemaphore(value: 0)
    private var startError: String?

    /// Connects to the bus at `address`, takes the service's name and serves until `stop`.
    public init(address: String) throws {
        let thread = Thread { [unowned self] in self.serve(address) }
        self.thread = thread
        thread.start()
        ready.wait()
        if let startError { throw FixtureError(startError) }
    }

    public var notifications: [Notification] { lock.withLock { shown } }
    public var closed: [UInt32] { lock.withLock { closedIDs } }

    /// Clicks notification `id`: `ActionInvoked(id, "default")`, then `NotificationClosed(id, 2)`,
    /// sent to the one that showed it.
    public func click(_ id: UInt32) throws {
        guard let notification = notifications.first(where: { $0.id == id }), let connection = lock.withLock({ self.connection }) else {
            throw FixtureError("no notification \(id) to click")
        }
        try emit(connection, to: notification.sender, "ActionInvoked", [g_variant_new_uint32(id), g_variant_new_string("default")])
        try emit(connection, to: notification.sender, "NotificationClosed", [g_variant_new_uint32(id), g_variant_new_uint32(2)])
    }

    /// Dismisses notification `id`, as its close button does: `NotificationClosed(id, 2)`.
    public func dismiss(_ id: UInt32) throws {
        guard let notification = notifications.first(where: { $0.id == id }), let connection = lock.withLock({ self.connection }) else {
            throw FixtureError("no notification \(id) to dismiss")
        }
        try emit(connection, to: notification.sender, "NotificationClosed", [g_variant_new_uint32(id), g_variant_new_uint32(2)])
    }

    private func emit(_ connection: OpaquePointer, to destination: String, _ signal: String, _ values: [OpaquePointer?]) throws {
        var values = values
        let parameters = values.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
        var error: UnsafeMutablePointer<GError>?
        guard g_dbus_connection_emit_signal(connection, destination, "/org/freedesktop/Notifications", "org.freedesktop.Notifications",
                                            signal, parameters, &error) != 0 else {
            throw FixtureError(Self.message(error))
        }
        g_dbus_connection_flush_sync(connection, nil, nil)
    }

    /// Stops serving and leaves the bus.
    public func stop() {
        let context: OpaquePointer? = lock.withLock {
            running = false
            return serverContext
        }
        if let context { g_main_context_wakeup(context) }
        while thread?.isFinished == false { usleep(1_000) }
    }

    deinit { stop() }

    private var serverContext: OpaquePointer?

    static func message(_ error: UnsafeMutablePointer<GError>?) -> String {
        defer { if let error { g_error_free(error) } }
        return error.map { String(cString: $0.pointee.message) } ?? "failed"
    }

    static let introspection = """
    <node>
      <interface name="org.freedesktop.Notifications">
        <method name="Notify">
          <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
          <arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
          <arg type="a{sv}" direction="in"/><arg type="i" direction="in"/><arg type="u" direction="out"/>
        </method>
        <method name="CloseNotification"><arg type="u" direction="in"/></method>
        <method name="GetCapabilities"><arg type="as" direction="out"/></method>
        <method name="GetServerInformation">
          <arg type="s" direction="out"/><arg type="s" direction="out"/><arg type="s" direction="out"/><arg type="s" direction="out"/>
        </method>
      </interface>
    </node>
    """

    private func serve(_ address: String) {
        let context = g_main_context_new()
        g_main_context_push_thread_default(context)
        lock.withLock { serverContext = context }
        defer {
            lock.withLock { serverContext = nil }
            g_main_context_pop_thread_default(context)
            g_main_context_unref(context)
        }
        var error: UnsafeMutablePointer<GError>?
        let flags = GDBusConnectionFlags(rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                                         | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
            startError = Self.message(error)
            ready.signal()
            return
        }
        defer {
            lock.withLock { self.connection = nil }
            g_dbus_connection_close_sync(connection, nil, nil)
            g_object_unref(UnsafeMutableRawPointer(connection))
        }
        guard let node = g_dbus_node_info_new_for_xml(Self.introspection, &error) else {
            startError = Self.message(error)
            ready.signal()
            return
        }
        defer { g_dbus_node_info_unref(node) }
        var vtable = GDBusInterfaceVTable()
        vtable.method_call = { connection, sender, _, _, method, parameters, invocation, data in
            guard let data, let method, let parameters else { return }
            let server = Unmanaged<NotificationServer>.fromOpaque(data).takeUnretainedValue()
            let reply = server.answer(String(cString: method), parameters, sender: sender.map { String(cString: $0) } ?? "")
            g_dbus_method_invocation_return_value(invocation, reply)
        }
        let registration = g_dbus_connection_register_object(connection, "/org/freedesktop/Notifications", node.pointee.interfaces[0],
                                                             &vtable, Unmanaged.passUnretained(self).toOpaque(), nil, &error)
        guard registration != 0 else {
            startError = Self.message(error)
            ready.signal()
            return
        }
        defer { g_dbus_connection_unregister_object(connection, registration) }
        // The name, asked of the bus itself: 1 is "the primary owner".
        var name: [OpaquePointer?] = [g_variant_new_string("org.freedesktop.Notifications"), g_variant_new_uint32(4)]
        let request = name.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 2) }
        guard let owned = g_dbus_connection_call_sync(connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                      "RequestName", request, nil, G_DBUS_CALL_FLAGS_NONE, 5_000, nil, &error) else {
            startError = Self.message(error)
            ready.signal()
            return
        }
        let result = g_variant_get_child_value(owned, 0)
        let primary = g_variant_get_uint32(result) == 1
        g_variant_unref(result)
        g_variant_unref(owned)
        guard primary else {
            startError = "org.freedesktop.Notifications is owned by another on this bus"
            ready.signal()
            return
        }
        lock.withLock { self.connection = connection }
        ready.signal()
        while lock.withLock({ running }) { g_main_context_iteration(context, 1) }
    }

    /// The reply to `method` (on the server's thread).
    private func answer(_ method: String, _ parameters: OpaquePointer, sender: String) -> OpaquePointer? {
        func string(_ index: Int) -> String {
            let child = g_variant_get_child_value(parameters, gsize(index))
            defer { g_variant_unref(child) }
            return String(cString: g_variant_get_string(child, nil))
        }
        var out: [OpaquePointer?]
        switch method {
        case "Notify":
            let list = g_variant_get_child_value(parameters, 5)
            var actions: [String] = []
            for index in 0..<g_variant_n_children(list) {
                let action = g_variant_get_child_value(list, index)
                actions.append(String(cString: g_variant_get_string(action, nil)))
                g_variant_unref(action)
            }
            g_variant_unref(list)
            let id: UInt32 = lock.withLock {
                nextID += 1
                shown.append(Notification(id: nextID, appName: string(0), title: string(3), body: string(4), actions: actions, sender: sender))
                return nextID
            }
            out = [g_variant_new_uint32(id)]
        case "CloseNotification":
            let child = g_variant_get_child_value(parameters, 0)
            let id = g_variant_get_uint32(child)
            g_variant_unref(child)
            lock.withLock { closedIDs.append(id) }
            out = []
        case "GetCapabilities":
            let capabilities: [String] = ["actions", "body"]
            let names = capabilities.map { strdup($0) }
            defer { names.forEach { free($0) } }
            let pointers: [UnsafePointer<gchar>?] = names.map { UnsafePointer($0) }
            out = [pointers.withUnsafeBufferPointer { g_variant_new_strv($0.baseAddress, gssize($0.count)) }]
        default:
            let information: [String] = ["rChat tests", "rChat", "1", "1.2"]
            out = information.map { g_variant_new_string($0) }
        }
        return out.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
    }
}

/// A desktop for a test: a `PrivateSessionBus` in `directory` with a `NotificationServer`
/// on it; `stop` ends both (the service first).
public final class PrivateDesktop {
    public let bus: PrivateSessionBus
    public let service: NotificationServer

    public init(directory: String) throws {
        bus = try PrivateSessionBus(directory: directory)
        do { service = try NotificationServer(address: bus.address) } catch { bus.stop(); throw error }
    }

    /// The bus's address, for `DBUS_SESSION_BUS_ADDRESS`.
    public var address: String { bus.address }
    public var notifications: [NotificationServer.Notification] { service.notifications }

    public func stop() {
        service.stop()
        bus.stop()
    }

    deinit { stop() }
}
