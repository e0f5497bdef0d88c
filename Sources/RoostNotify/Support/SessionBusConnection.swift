internal import CNotify
import Foundation

/// GLib's shared session bus connection, for short synchronous calls with a timeout. Only used on threads
/// that may block (the desktop sink's GLib thread, or a `BlockingCall` thread).
final class SessionBusConnection: @unchecked Sendable {
    private let connection: OpaquePointer

    struct CallError: Error, CustomStringConvertible {
        let description: String
    }

    private init(connection: OpaquePointer) {
        self.connection = connection
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(connection))
    }

    /// nil when no session bus is configured or it cannot be reached (GIO missing included).
    static func open() -> SessionBusConnection? {
        guard SessionBus.isConfigured(), roost_gio_load() == nil else { return nil }
        var error: UnsafeMutablePointer<GError>?
        guard let connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            if let error { g_error_free(error) }
            return nil
        }
        return SessionBusConnection(connection: connection)
    }

    /// Calls a method with string arguments and returns the first value of the reply. Never starts a
    /// service (no D-Bus activation), so a missing service fails at once.
    func call(destination: String, path: String, interface: String, method: String, arguments: [String] = [],
              timeoutMilliseconds: Int32) throws(CallError) -> DBusValue? {
        var children: [OpaquePointer?] = arguments.map { g_variant_new_string($0) }
        let parameters = children.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
        var error: UnsafeMutablePointer<GError>?
        let reply = g_dbus_connection_call_sync(connection, destination, path, interface, method, parameters, nil,
                                                G_DBUS_CALL_FLAGS_NO_AUTO_START, timeoutMilliseconds, nil, &error)
        guard let reply else {
            let message = error.map { String(cString: $0.pointee.message) } ?? "no reply"
            if let error { g_error_free(error) }
            throw CallError(description: message)
        }
        defer { g_variant_unref(reply) }
        guard g_variant_n_children(reply) > 0, let first = g_variant_get_child_value(reply, 0) else { return nil }
        defer { g_variant_unref(first) }
        return Self.value(first)
    }

    /// Whether a name (e.g. org.freedesktop.Notifications) has an owner right now.
    func hasOwner(_ name: String, timeoutMilliseconds: Int32) throws(CallError) -> Bool {
        let value = try call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                             method: "NameHasOwner", arguments: [name], timeoutMilliseconds: timeoutMilliseconds)
        return value == .bool(true)
    }

    /// Whether the bus can start the name on demand (a D-Bus service file exists).
    func isActivatable(_ name: String, timeoutMilliseconds: Int32) throws(CallError) -> Bool {
        let value = try call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                             method: "ListActivatableNames", timeoutMilliseconds: timeoutMilliseconds)
        if case let .strings(names) = value { return names.contains(name) }
        return false
    }

    /// Calls `handler` with the arguments of each `member` signal `sender` emits on `path`, on the main context that is
    /// the calling thread's default (the desktop sink's GLib thread); the subscription's id (0: none), for `unsubscribe`.
    func subscribe(sender: String, interface: String, member: String, path: String,
                   handler: @escaping ([DBusValue?]) -> Void) -> UInt32 {
        let box = Unmanaged.passRetained(SignalHandler(handler)).toOpaque()
        return g_dbus_connection_signal_subscribe(connection, sender, interface, member, path, nil, G_DBUS_SIGNAL_FLAGS_NONE,
                                                  { _, _, _, _, _, parameters, data in
            guard let data, let parameters else { return }
            let arguments = (0..<g_variant_n_children(parameters)).map { index -> DBusValue? in
                guard let child = g_variant_get_child_value(parameters, index) else { return nil }
                defer { g_variant_unref(child) }
                return SessionBusConnection.value(child)
            }
            Unmanaged<SignalHandler>.fromOpaque(data).takeUnretainedValue().handler(arguments)
        }, box, { data in
            guard let data else { return }
            Unmanaged<SignalHandler>.fromOpaque(data).release()
        })
    }

    func unsubscribe(_ id: UInt32) {
        g_dbus_connection_signal_unsubscribe(connection, id)
    }

    private final class SignalHandler {
        let handler: ([DBusValue?]) -> Void
        init(_ handler: @escaping ([DBusValue?]) -> Void) { self.handler = handler }
    }

    private static func value(_ variant: OpaquePointer) -> DBusValue? {
        let type = String(cString: g_variant_get_type_string(variant))
        switch type {
        case "b": return .bool(g_variant_get_boolean(variant) != 0)
        case "u": return .number(UInt64(g_variant_get_uint32(variant)))
        case "t": return .number(UInt64(g_variant_get_uint64(variant)))
        case "s", "o": return .string(String(cString: g_variant_get_string(variant, nil)))
        case "as":
            var names: [String] = []
            for index in 0..<g_variant_n_children(variant) {
                guard let child = g_variant_get_child_value(variant, index) else { continue }
                names.append(String(cString: g_variant_get_string(child, nil)))
                g_variant_unref(child)
            }
            return .strings(names)
        default: return nil
        }
    }
}

/// Whether a D-Bus session bus can be reached without GLib trying to autolaunch one (which can hang on a
/// headless machine).
enum SessionBus {
    static func isConfigured(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return true }
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return false }
        return FileManager.default.fileExists(atPath: runtime + "/bus")
    }
}

/// The first value of a D-Bus reply, for the few shapes Roost reads.
enum DBusValue: Sendable, Equatable {
    case bool(Bool)
    case number(UInt64)
    case string(String)
    case strings([String])
}
