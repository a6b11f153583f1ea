#!/usr/bin/python3
"""A fullscreen GTK 3 window of known content on a Wayland compositor, for capture tests.

The window's left half is pure red (#FF0000), its right half pure blue (#0000FF). With --clock it also draws a
white block at the top-left corner that moves one step every second, as a ticking clock changes a few pixels.
Prints "shown" once the first frame was drawn.
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402

ticks = 0
shown = False


def draw(widget, context):
    global shown
    width, height = widget.get_allocated_width(), widget.get_allocated_height()
    context.set_source_rgb(1, 0, 0)
    context.rectangle(0, 0, width // 2, height)
    context.fill()
    context.set_source_rgb(0, 0, 1)
    context.rectangle(width // 2, 0, width - width // 2, height)
    context.fill()
    if "--clock" in sys.argv:
        context.set_source_rgb(1, 1, 1)
        context.rectangle(16 + (ticks % 10) * 24, 16, 16, 16)
        context.fill()
    if not shown and width > 1:
        shown = True
        GLib.idle_add(lambda: print("shown", flush=True) and False)
    return False


def tick(area):
    global ticks
    ticks += 1
    area.queue_draw_area(0, 0, 16 + 10 * 24 + 16, 48)
    return True


window = Gtk.Window(title="screenpub test window")
area = Gtk.DrawingArea()
area.connect("draw", draw)
window.add(area)
window.connect("destroy", Gtk.main_quit)
window.fullscreen()
window.show_all()
if "--clock" in sys.argv:
    GLib.timeout_add(1000, tick, area)
Gtk.main()
