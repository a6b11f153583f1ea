#!/usr/bin/env python3
"""TEST DOUBLE: a ScreenCast portal *backend* (org.freedesktop.impl.portal.ScreenCast) for screenpub's tests.

The real xdg-desktop-portal frontend talks to it exactly as it talks to a desktop's backend
(xdg-desktop-portal-gnome, -kde, -wlr). Real backends cannot run here: they need a running compositor and,
for wlroots, a GPU (DMA-BUF only). This one shows no dialog: it answers as a user would (grant, or decline
with --answer cancel), hands out the PipeWire node given with --node, and writes every call it gets as one
JSON line to --log, so tests can check what the frontend passed on (persist_mode, restore_data, cursor_mode).
"""
import argparse
import json
import sys

from gi.repository import Gio, GLib

BUS_NAME = "org.freedesktop.impl.portal.desktop.screenpubtest"
OBJECT_PATH = "/org/freedesktop/portal/desktop"
VENDOR = "screenpubtest"

SCREENCAST_XML = """
<node>
  <interface name="org.freedesktop.impl.portal.ScreenCast">
    <method name="CreateSession">
      <arg type="o" name="handle" direction="in"/>
      <arg type="o" name="session_handle" direction="in"/>
      <arg type="s" name="app_id" direction="in"/>
      <arg type="a{sv}" name="options" direction="in"/>
      <arg type="u" name="response" direction="out"/>
      <arg type="a{sv}" name="results" direction="out"/>
    </method>
    <method name="SelectSources">
      <arg type="o" name="handle" direction="in"/>
      <arg type="o" name="session_handle" direction="in"/>
      <arg type="s" name="app_id" direction="in"/>
      <arg type="a{sv}" name="options" direction="in"/>
      <arg type="u" name="response" direction="out"/>
      <arg type="a{sv}" name="results" direction="out"/>
    </method>
    <method name="Start">
      <arg type="o" name="handle" direction="in"/>
      <arg type="o" name="session_handle" direction="in"/>
      <arg type="s" name="app_id" direction="in"/>
      <arg type="s" name="parent_window" direction="in"/>
      <arg type="a{sv}" name="options" direction="in"/>
      <arg type="u" name="response" direction="out"/>
      <arg type="a{sv}" name="results" direction="out"/>
    </method>
    <property name="AvailableSourceTypes" type="u" access="read"/>
    <property name="AvailableCursorModes" type="u" access="read"/>
    <property name="version" type="u" access="read"/>
  </interface>
</node>
"""

SESSION_XML = """
<node>
  <interface name="org.freedesktop.impl.portal.Session">
    <method name="Close"/>
    <signal name="Closed"/>
    <property name="version" type="u" access="read"/>
  </interface>
</node>
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node", type=int, required=True, help="the PipeWire node id to hand out")
    parser.add_argument("--node-file", help="if this file exists at Start, hand out the node id it holds instead")
    parser.add_argument("--width", type=int, default=0)
    parser.add_argument("--height", type=int, default=0)
    parser.add_argument(
        "--answer", choices=["grant", "cancel", "fail", "fail-restored", "grant-monitor"], default="grant",
        help="fail-restored: fail a Start whose SelectSources brought restore data, as for a grant gone stale; "
        "grant-monitor: share a monitor whatever was asked for")
    parser.add_argument("--cursor-modes", type=int, default=3, help="AvailableCursorModes (1 hidden, 2 embedded, 4 metadata)")
    parser.add_argument("--log", required=True, help="file to append one JSON line per call to")
    arguments = parser.parse_args()

    screencast = Gio.DBusNodeInfo.new_for_xml(SCREENCAST_XML).interfaces[0]
    session_interface = Gio.DBusNodeInfo.new_for_xml(SESSION_XML).interfaces[0]
    sessions = {}
    # What SelectSources asked for, by session: Start's own options are empty.
    persist_modes = {}
    restored = set()
    source_types = {}
    log = open(arguments.log, "a", buffering=1)

    def record(method, **fields):
        log.write(json.dumps({"method": method, **fields}, default=str) + "\n")

    def session_call(connection, sender, path, interface, method, parameters, invocation):
        record("Session." + method, session=path)
        registration = sessions.pop(path, None)
        if registration is not None:
            connection.unregister_object(registration)
        invocation.return_value(None)

    def session_property(connection, sender, path, interface, name):
        return GLib.Variant("u", 1)

    def screencast_call(connection, sender, path, interface, method, parameters, invocation):
        arguments_ = parameters.unpack()
        options = arguments_[-1]
        session_handle = arguments_[1]
        record(method, session=session_handle, app_id=arguments_[2], options=options)
        results = {}
        response = 0
        if method == "SelectSources":
            persist_modes[session_handle] = options.get("persist_mode", 0)
            # What is shared: a window when only windows were asked for, else a monitor.
            source_types[session_handle] = 2 if options.get("types", 1) == 2 and arguments.answer != "grant-monitor" else 1
            if "restore_data" in options:
                restored.add(session_handle)
        if method == "CreateSession":
            sessions[session_handle] = connection.register_object(
                session_handle, session_interface, session_call, session_property, None)
        elif method == "Start":
            if arguments.answer == "cancel":
                response = 1
            elif arguments.answer == "fail" or (arguments.answer == "fail-restored" and session_handle in restored):
                response = 2
            else:
                stream_properties = {"source_type": GLib.Variant("u", source_types.get(session_handle, 1))}
                if arguments.width > 0:
                    stream_properties["size"] = GLib.Variant("(ii)", (arguments.width, arguments.height))
                node = arguments.node
                if arguments.node_file:
                    try:
                        with open(arguments.node_file) as file:
                            node = int(file.read().strip())
                    except (OSError, ValueError):
                        pass
                record("Start.node", node=node)
                results["streams"] = GLib.Variant("a(ua{sv})", [(node, stream_properties)])
                persist_mode = persist_modes.get(session_handle, 0)
                if persist_mode:
                    results["persist_mode"] = GLib.Variant("u", persist_mode)
                    results["restore_data"] = GLib.Variant("(suv)", (VENDOR, 1, GLib.Variant("s", "monitor-0")))
        invocation.return_value(GLib.Variant("(ua{sv})", (response, results)))

    def screencast_property(connection, sender, path, interface, name):
        return GLib.Variant("u", {"AvailableSourceTypes": 3, "AvailableCursorModes": arguments.cursor_modes, "version": 4}[name])

    connection = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    connection.register_object(OBJECT_PATH, screencast, screencast_call, screencast_property, None)
    loop = GLib.MainLoop()

    def acquired(connection, name):
        record("ready")

    def lost(connection, name):
        print(f"lost the bus name {name}", file=sys.stderr)
        loop.quit()

    Gio.bus_own_name_on_connection(connection, BUS_NAME, Gio.BusNameOwnerFlags.NONE, acquired, lost)
    loop.run()


if __name__ == "__main__":
    main()
