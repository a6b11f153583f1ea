#!/usr/bin/python3
"""A screen cast of mutter's monitor with a virtual pointer, through mutter's own D-Bus API.

Run on the session bus of a mutter started with --headless. It creates a RemoteDesktop session and a ScreenCast
session tied to it, records the monitor (cursor mode from the first argument: 0 hidden, 1 embedded, 2 metadata),
starts, and prints "node N" once the PipeWire stream is there. Then it reads commands on standard input:

    move X Y      the virtual pointer to (X, Y) on the recorded monitor
    click         a left click where the pointer is
    key KEYSYM    a key press and release (an X keysym number, e.g. 65293 for Return)
    tab           shorthand for key 65289

Each command answers "ok" (or "error: ...") on standard output. The sessions end when standard input closes,
as mutter ends a session whose D-Bus caller has gone.
"""
import sys

from gi.repository import Gio, GLib

MUTTER = "org.gnome.Mutter"
BUTTON_LEFT = 0x110  # BTN_LEFT of linux/input-event-codes.h


def call(bus, path, interface, method, parameters=None, reply=None):
    return bus.call_sync(MUTTER + "." + interface.split(".")[0], path, MUTTER + "." + interface, method, parameters,
                         GLib.VariantType(reply) if reply else None, Gio.DBusCallFlags.NONE, 10000, None)


def main():
    cursor_mode = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    loop = GLib.MainLoop()

    (remote_path,) = call(bus, "/org/gnome/Mutter/RemoteDesktop", "RemoteDesktop", "CreateSession", None, "(o)").unpack()
    session_id = bus.call_sync("org.gnome.Mutter.RemoteDesktop", remote_path, "org.freedesktop.DBus.Properties", "Get",
                               GLib.Variant("(ss)", ("org.gnome.Mutter.RemoteDesktop.Session", "SessionId")),
                               GLib.VariantType("(v)"), Gio.DBusCallFlags.NONE, 10000, None).unpack()[0]
    (cast_path,) = call(bus, "/org/gnome/Mutter/ScreenCast", "ScreenCast", "CreateSession",
                        GLib.Variant("(a{sv})", ({"remote-desktop-session-id": GLib.Variant("s", session_id)},)), "(o)").unpack()
    (stream_path,) = bus.call_sync("org.gnome.Mutter.ScreenCast", cast_path, "org.gnome.Mutter.ScreenCast.Session",
                                   "RecordMonitor",
                                   GLib.Variant("(sa{sv})", ("", {"cursor-mode": GLib.Variant("u", cursor_mode)})),
                                   GLib.VariantType("(o)"), Gio.DBusCallFlags.NONE, 10000, None).unpack()

    added = []

    def stream_added(_connection, _sender, _path, _interface, _signal, parameters):
        if added:
            return
        added.append(True)
        print("node %d" % parameters.unpack()[0], flush=True)
        GLib.io_add_watch(GLib.IOChannel.unix_new(sys.stdin.fileno()), GLib.PRIORITY_DEFAULT,
                          GLib.IOCondition.IN | GLib.IOCondition.HUP, command)

    def ended(*_):
        print("error: the session was closed by mutter", flush=True)
        loop.quit()

    bus.signal_subscribe("org.gnome.Mutter.ScreenCast", "org.gnome.Mutter.ScreenCast.Stream", "PipeWireStreamAdded",
                         stream_path, None, Gio.DBusSignalFlags.NONE, stream_added)
    bus.signal_subscribe("org.gnome.Mutter.RemoteDesktop", "org.gnome.Mutter.RemoteDesktop.Session", "Closed",
                         remote_path, None, Gio.DBusSignalFlags.NONE, ended)

    def remote(method, signature, values):
        bus.call_sync("org.gnome.Mutter.RemoteDesktop", remote_path, "org.gnome.Mutter.RemoteDesktop.Session", method,
                      GLib.Variant(signature, values), None, Gio.DBusCallFlags.NONE, 10000, None)

    def command(_channel, condition):
        line = sys.stdin.readline()
        if not line:
            loop.quit()
            return False
        words = line.split()
        try:
            if words[:1] == ["move"]:
                remote("NotifyPointerMotionAbsolute", "(sdd)", (stream_path, float(words[1]), float(words[2])))
            elif words == ["click"]:
                remote("NotifyPointerButton", "(ib)", (BUTTON_LEFT, True))
                remote("NotifyPointerButton", "(ib)", (BUTTON_LEFT, False))
            elif words[:1] in (["key"], ["tab"]):
                keysym = 0xFF09 if words[0] == "tab" else int(words[1])
                remote("NotifyKeyboardKeysym", "(ub)", (keysym, True))
                remote("NotifyKeyboardKeysym", "(ub)", (keysym, False))
            else:
                raise ValueError("unknown command %r" % line.strip())
            print("ok", flush=True)
        except Exception as error:  # a failed command is reported; the session goes on
            print("error: %s" % error, flush=True)
        return True

    remote("Start", "()", ())
    loop.run()
    try:
        remote("Stop", "()", ())
    except GLib.Error:
        pass


if __name__ == "__main__":
    main()
