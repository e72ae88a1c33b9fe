import Foundation
import CGio

/// The desktop's notification service (freedesktop `org.freedesktop.Notifications`), spoken
/// to over the session bus from inside this process through GIO's GDBus: an alert's title
/// and text travel in a D-Bus message on the user's own bus, never in a command line (which
/// any local user reads in `/proc/PID/cmdline`).
public final class DesktopBus {
    static let service = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"

    /// The GDBusConnection.
    private let connection: OpaquePointer

    /// The session bus's address here: `DBUS_SESSION_BUS_ADDRESS`, else the socket
    /// `$XDG_RUNTIME_DIR/bus`; nil when there is neither (GIO then asks the display's bus).
    public static func address(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let named = environment["DBUS_SESSION_BUS_ADDRESS"], !named.isEmpty { return named }
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return nil }
        var info = stat()
        guard lstat("\(runtime)/bus", &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK else { return nil }
        return "unix:path=\(runtime)/bus"
    }

    /// Connects to the bus at `address` (nil: the session bus GIO finds).
    public init(address: String?) throws(EngineError) {
        var error: UnsafeMutablePointer<GError>?
        var resolved = address
        if resolved == nil {
            guard let found = g_dbus_address_get_for_bus_sync(G_BUS_TYPE_SESSION, nil, &error) else { throw Self.failure(error) }
            resolved = String(cString: found)
            g_free(found)
        }
        let flags = GDBusConnectionFlags(rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                                         | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        guard let connection = g_dbus_connection_new_for_address_sync(resolved, flags, nil, nil, &error) else { throw Self.failure(error) }
        self.connection = connection
    }

    deinit {
        g_dbus_connection_close_sync(connection, nil, nil)
        g_object_unref(UnsafeMutableRawPointer(connection))
    }

    static func failure(_ error: UnsafeMutablePointer<GError>?) -> EngineError {
        defer { if let error { g_error_free(error) } }
        return .io("the desktop's notification service: " + (error.map { String(cString: $0.pointee.message) } ?? "unreachable"))
    }

    /// Shows a notification (`Notify`): the app name rChat, the title, the body (already
    /// markup-escaped) and `actions` (pairs of key and label); its id.
    public func notify(title: String, body: String, actions: [String] = [], timeout: Double) throws(EngineError) -> UInt32 {
        let strings = actions.map { strdup($0) }
        defer { strings.forEach { free($0) } }
        let pointers: [UnsafePointer<gchar>?] = strings.map { UnsafePointer($0) }
        let hintType = g_variant_type_new("{sv}")
        defer { g_variant_type_free(hintType) }
        var children: [OpaquePointer?] = [
            g_variant_new_string("rChat"), g_variant_new_uint32(0), g_variant_new_string(""),
            g_variant_new_string(title), g_variant_new_string(body),
            pointers.withUnsafeBufferPointer { g_variant_new_strv($0.baseAddress, gssize($0.count)) },
            g_variant_new_array(hintType, nil, 0), g_variant_new_int32(-1),
        ]
        let parameters = children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
        let reply = try call("Notify", parameters, replying: "(u)", timeout: timeout)
        defer { g_variant_unref(reply) }
        let id = g_variant_get_child_value(reply, 0)
        defer { g_variant_unref(id) }
        return g_variant_get_uint32(id)
    }

    /// Closes notification `id` (`CloseNotification`).
    public func close(_ id: UInt32, timeout: Double = 2) throws(EngineError) {
        var child: [OpaquePointer?] = [g_variant_new_uint32(id)]
        let parameters = child.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, 1) }
        g_variant_unref(try call("CloseNotification", parameters, replying: "()", timeout: timeout))
    }

    private func call(_ method: String, _ parameters: OpaquePointer?, replying type: String, timeout: Double) throws(EngineError) -> OpaquePointer {
        let replyType = g_variant_type_new(type)
        defer { g_variant_type_free(replyType) }
        var error: UnsafeMutablePointer<GError>?
        guard let reply = g_dbus_connection_call_sync(connection, Self.service, Self.path, Self.service, method, parameters, replyType,
                                                      G_DBUS_CALL_FLAGS_NONE, gint(timeout * 1000), nil, &error) else {
            throw Self.failure(error)
        }
        return reply
    }

    /// How waiting on a notification ended.
    public enum Ending: Equatable, Sendable {
        /// Its action `key` was invoked ("default": the notification itself was clicked).
        case action(String)
        /// Closed: dismissed, expired, or closed by us.
        case closed
        /// Nothing happened within the time given.
        case timedOut
        /// The bus connection closed.
        case busGone
    }

    /// Shows a notification with `actions` (`notify`), hands its id to `shown`, and waits, at
    /// most `seconds`, for one of its actions or its closing (the signals `ActionInvoked`
    /// and `NotificationClosed`, listened to before it is shown so neither is missed), or
    /// until the bus goes away. Runs GLib's default main context, where the connection's
    /// `closed` signal and the subscription are dispatched: for a process that does only
    /// this (`rchat notify`).
    public func notifyAndWait(title: String, body: String, actions: [String], within seconds: Double,
                              shown: (UInt32) -> Void) throws(EngineError) -> Ending {
        let context = g_main_context_default()
        let wait = Wait()
        let data = Unmanaged.passUnretained(wait).toOpaque()
        let subscription = g_dbus_connection_signal_subscribe(connection, Self.service, Self.service, nil, Self.path, nil,
                                                              G_DBUS_SIGNAL_FLAGS_NONE, { _, _, _, _, member, parameters, data in
            guard let data, let member, let parameters else { return }
            Unmanaged<Wait>.fromOpaque(data).takeUnretainedValue().signal(String(cString: member), parameters)
        }, data, nil)
        defer { g_dbus_connection_signal_unsubscribe(connection, subscription) }
        let closed = g_signal_connect_data(UnsafeMutableRawPointer(connection), "closed", unsafeBitCast({ (_: gpointer?, _: gboolean, _: gpointer?, data: gpointer?) in
            guard let data else { return }
            Unmanaged<Wait>.fromOpaque(data).takeUnretainedValue().ending = .busGone
        } as @convention(c) (gpointer?, gboolean, gpointer?, gpointer?) -> Void, to: GCallback.self), data, nil, GConnectFlags(rawValue: 0))
        defer { g_signal_handler_disconnect(UnsafeMutableRawPointer(connection), closed) }
        let timer = g_timeout_source_new_seconds(guint(max(1, seconds.rounded(.up))))
        defer { g_source_destroy(timer); g_source_unref(timer) }
        g_source_set_callback(timer, { data in
            guard let data else { return 0 }
            let wait = Unmanaged<Wait>.fromOpaque(data).takeUnretainedValue()
            if wait.ending == nil { wait.ending = .timedOut }
            return 0
        }, data, nil)
        g_source_attach(timer, context)

        wait.id = try notify(title: title, body: body, actions: actions, timeout: 25)
        shown(wait.id!)
        while wait.ending == nil { g_main_context_iteration(context, 1) }
        return wait.ending!
    }

    /// What the signal handlers see, on the waiting thread (its main context).
    private final class Wait {
        var id: UInt32?
        var ending: Ending?

        func signal(_ member: String, _ parameters: OpaquePointer) {
            guard g_variant_n_children(parameters) == 2 else { return }
            let first = g_variant_get_child_value(parameters, 0), second = g_variant_get_child_value(parameters, 1)
            defer { g_variant_unref(first); g_variant_unref(second) }
            guard g_variant_is_of_type(first, g_variant_type_checked_("u")) != 0 else { return }
            let id = g_variant_get_uint32(first)
            let key = g_variant_is_of_type(second, g_variant_type_checked_("s")) != 0 ? String(cString: g_variant_get_string(second, nil)) : ""
            // Dispatched only once `notify` returned: the id is known.
            guard id == self.id, ending == nil else { return }
            switch member {
            case "ActionInvoked": ending = .action(key)
            case "NotificationClosed": ending = .closed
            default: break
            }
        }
    }
}
