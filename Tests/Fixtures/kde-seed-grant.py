#!/usr/bin/python3
"""Seeds a ScreenCast grant in the permission store, as the portal keeps one after a user said yes in KDE's dialog.

Usage: kde-seed-grant.py TOKEN window|output ID

Writes, under TOKEN in the "screencast" table, the permission "yes" for host programs (app id "") and the restore
data xdg-desktop-portal-kde 5.27 reads back: ("KDE", 1, <payload>), the payload being a QVariantMap serialised
with QDataStream: {"outputs": [ID] or [], "windows": [ID] or []} (an output's id is its position, "0x0"; a
window's, KWin's uuid of it). The portal then hands the restore data to the backend, which starts the cast with no
dialog. Prints "seeded TOKEN".
"""
import struct
import sys

from gi.repository import Gio, GLib


def qstring(text):
    data = text.encode("utf-16-be")
    return struct.pack(">I", len(data)) + data


def qvariant_header(type_id):
    # QVariant in QDataStream (Qt 5): the type id, then a null flag.
    return struct.pack(">Ib", type_id, 0)


def payload(outputs, windows):
    string_list, variant_list, string = 11, 9, 10
    body = struct.pack(">I", 2)
    body += qstring("windows") + qvariant_header(string_list) + struct.pack(">I", len(windows))
    body += b"".join(qstring(window) for window in windows)
    body += qstring("outputs") + qvariant_header(variant_list) + struct.pack(">I", len(outputs))
    body += b"".join(qvariant_header(string) + qstring(output) for output in outputs)
    return body


def main():
    token, kind, identifier = sys.argv[1:4]
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)

    def call(method, parameters):
        bus.call_sync(
            "org.freedesktop.impl.portal.PermissionStore", "/org/freedesktop/impl/portal/PermissionStore",
            "org.freedesktop.impl.portal.PermissionStore", method, parameters, None, Gio.DBusCallFlags.NONE, 10000, None)

    call("SetPermission", GLib.Variant("(sbssas)", ("screencast", True, token, "", ["yes"])))
    data = payload([identifier], []) if kind == "output" else payload([], [identifier])
    restore = GLib.Variant("(suv)", ("KDE", 1, GLib.Variant("ay", data)))
    call("SetValue", GLib.Variant("(sbsv)", ("screencast", True, token, restore)))
    print("seeded", token)


main()
