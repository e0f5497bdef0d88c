#!/usr/bin/python3
"""Prints the calls recorded by python-dbusmock's notification daemon as JSON (for RoostNotifyTests)."""
import json
import sys

import dbus

bus = dbus.SessionBus()
mock = dbus.Interface(bus.get_object('org.freedesktop.Notifications', '/org/freedesktop/Notifications'),
                      'org.freedesktop.DBus.Mock')


def plain(value):
    if isinstance(value, (dbus.Array, list)):
        return [plain(v) for v in value]
    if isinstance(value, dbus.Dictionary):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.Byte, dbus.Int16, dbus.Int32, dbus.Int64, dbus.UInt16, dbus.UInt32, dbus.UInt64)):
        return int(value)
    if isinstance(value, dbus.Double):
        return float(value)
    return str(value)


json.dump([{'method': str(method), 'args': plain(args)} for _, method, args in mock.GetCalls()], sys.stdout)
