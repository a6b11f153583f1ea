import CX11Shims
import CX11
import Glibc
public import Logging
public import ScreenMedia
import Synchronization

/// Captures the X11 root window, one RandR monitor, one window or a region, at a fixed frame rate.
///
/// Damage-driven: XDamage tells which rectangles changed since the last tick; on a tick where nothing changed
/// and the pointer did not move, nothing is grabbed or converted and the consumer gets
/// ``FrameConsumer/consumeUnchanged(_:at:)``. Changed rectangles are copied from the MIT-SHM image into the
/// frame (which keeps the last picture), the pointer is blended in, and the frame's `changedRects` lists what
/// differs from the previous frame, so later stages can work in proportion to the change.
///
/// The display connection belongs to the thread that runs ``run(framesPerSecond:stop:consumer:)``.
public final class XShmFrameSource: FrameSource {
    public let options: X11CaptureOptions
    /// The target with a window pattern replaced by the window it matched when capture started.
    private let target: X11CaptureTarget
    private let logger: Logger
    private let connection: X11Connection
    private let clock = MonotonicClock()

    /// The drawable pixels are read from, and where the captured area starts in it.
    private var drawable: Drawable
    private var origin: (x: Int, y: Int) = (0, 0)
    private var captureSize: (width: Int, height: Int)
    private var grabber: ImageGrabber
    private let frame: VideoFrame

    private var damage: Damage = 0
    private var damageEventBase: Int32 = 0
    private var fixesEventBase: Int32 = 0
    private var cursor = CursorOverlay()
    private var lastPointer: (x: Int, y: Int)? = nil

    // Per-tick event state, kept between ticks so its capacity is reused.
    private var damagedRects = DamageRegion()
    private var geometryMayHaveChanged = false
    private var cursorShapeChanged = false
    private var windowDestroyed = false
    private let windowMasks: WindowMaskTracker

    private let grabNanosecondsCounter = Atomic<UInt64>(0)

    /// Duration of the last grab (safe to read from any thread): the capture part of the capture delay.
    public var lastGrabMilliseconds: Double { Double(grabNanosecondsCounter.load(ordering: .relaxed)) / 1e6 }
    public var usesSharedMemory: Bool { grabber.usesSharedMemory }
    public var displayName: String { connection.name }
    public var size: (width: Int, height: Int) { captureSize }

    /// Opens the display and checks the target (window exists, monitor exists, region inside the screen).
    public init(options: X11CaptureOptions, logger: Logger) throws(X11CaptureError) {
        self.options = options
        self.logger = logger
        connection = try X11Connection(name: options.displayName)
        if case .windowMatching(let pattern) = options.target {
            let window = try X11Inventory.window(matching: pattern, on: connection)
            logger.info("\"\(pattern)\" is window \(window.hexID) (\(window.className.isEmpty ? window.instance : window.className), \"\(window.title)\")")
            target = .window(window.id)
        } else {
            target = options.target
        }
        let geometry = try Self.resolveGeometry(target, connection)
        drawable = geometry.drawable
        origin = geometry.origin
        captureSize = geometry.size
        grabber = try ImageGrabber(
            connection: connection, width: geometry.size.width, height: geometry.size.height,
            preferSharedMemory: options.usesSharedMemory, logger: logger)
        frame = VideoFrame(width: geometry.size.width, height: geometry.size.height)
        frame.covers.style = options.mask.style
        windowMasks = WindowMaskTracker(connection: connection, patterns: options.mask.windowPatterns)
        try setUpEvents()
    }

    deinit {
        if damage != 0 && !connection.isLost { XDamageDestroy(connection.display, damage) }
    }

    // MARK: Capture loop

    public func run(framesPerSecond: Double, stop: StopSignal, consumer: any FrameConsumer) throws {
        var schedule = TickSchedule(framesPerSecond: framesPerSecond, clock: clock)
        var first = true
        while !stop.isStopped {
            try captureTick(first: first, consumer: consumer)
            first = false
            schedule.advance(reportingMissedTicksTo: consumer)
            sleepUntil(nanoseconds: schedule.nextDeadline, stop: stop)
        }
    }

    private func sleepUntil(nanoseconds deadline: UInt64, stop: StopSignal) {
        // Slices of at most 100 ms keep a stop request responsive at low frame rates.
        while !stop.isStopped {
            let now = clock.nanoseconds(fromTicks: clock.now())
            if now >= deadline { return }
            let wake = min(deadline, now + 100_000_000)
            var spec = timespec(tv_sec: Int(wake / 1_000_000_000), tv_nsec: Int(wake % 1_000_000_000))
            _ = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil)
        }
    }

    private func captureTick(first: Bool, consumer: any FrameConsumer) throws {
        try connection.checkAlive()
        let damaged = drainEvents() || damage == 0
        try connection.checkAlive()
        if windowDestroyed {
            throw X11CaptureError(.windowClosed, "the captured window \(hex(drawable)) was closed")
        }
        var sizeChanged = false
        if geometryMayHaveChanged {
            geometryMayHaveChanged = false
            sizeChanged = try followGeometry()
        }
        var pointer: (x: Int, y: Int)? = nil
        if options.drawsCursor {
            if cursorShapeChanged || first {
                cursor.reloadShape(connection.display)
                cursorShapeChanged = false
            }
            pointer = queryPointer()
        }
        // Moving, appearing or leaving the screen all change what is drawn.
        let pointerMoved = options.drawsCursor && !samePosition(pointer, lastPointer)
        // Where the covers were: when they move, those areas must come from this tick's picture (below).
        let coveredBefore = frame.covers.rects
        var coversChanged = updateCovers(force: first || sizeChanged)
        let captureTime = clock.mediaTime(fromTicks: clock.now())
        let wallClock = WallClockTime.now()

        if !(first || sizeChanged || damaged || pointerMoved || coversChanged) {
            frame.captureTime = captureTime
            frame.wallClock = wallClock
            try consumer.consumeUnchanged(frame, at: captureTime)
            return
        }

        frame.changedRects.removeAll(keepingCapacity: true)
        if first || sizeChanged || damage == 0 {
            frame.changedRects.append(frame.bounds)
        } else {
            frame.changedRects.append(contentsOf: damagedRects.rects)
        }
        damagedRects.removeAll()
        if damaged || first || sizeChanged || (coversChanged && windowMasks.isActive) {
            let started = clock.now()
            let code: Int32
            if windowMasks.isActive {
                // The covers must be where the matching windows are in the picture itself. Read after the grab,
                // a window moved in between would be covered where it went and shown where it was; so the
                // server holds still while its events are read, the windows walked and the picture taken.
                // What was drawn meanwhile is copied from this picture now: the area a window left is uncovered
                // in this frame, so what the frame holds there must not be the window.
                XGrabServer(connection.display)
                XSync(connection.display, 0)
                if drainEvents() {
                    frame.changedRects.append(contentsOf: damagedRects.rects)
                    damagedRects.removeAll()
                }
                if updateCovers(force: false) { coversChanged = true }
                if damage != 0 { XDamageSubtract(connection.display, damage, 0, 0) }
                code = grabber.grab(drawable, x: origin.x, y: origin.y)
                XUngrabServer(connection.display)
                XFlush(connection.display)
            } else {
                // Reset the damage before grabbing: anything drawn after this point is reported again next tick.
                if damage != 0 { XDamageSubtract(connection.display, damage, 0, 0) }
                code = grabber.grab(drawable, x: origin.x, y: origin.y)
            }
            grabNanosecondsCounter.store(clock.nanoseconds(fromTicks: clock.now() - started), ordering: .relaxed)
            if code != 0 { try grabFailed(code) }
        }
        if coversChanged { frame.changedRects.append(contentsOf: coveredBefore) }
        if !cursor.drawnRect.isEmpty { frame.changedRects.append(cursor.drawnRect) }
        DamageRegion.coalesce(frame)
        copyChangedRects()
        cursor.forgetDrawn()
        if let pointer, options.drawsCursor {
            cursor.draw(into: frame, pointerX: pointer.x, pointerY: pointer.y)
            if !cursor.drawnRect.isEmpty { frame.changedRects.append(cursor.drawnRect) }
        }
        lastPointer = pointer
        frame.captureTime = captureTime
        frame.wallClock = wallClock
        try consumer.consume(frame, sizeChanged: first || sizeChanged)
    }

    // MARK: Privacy masks

    /// Sets the frame's covers from the mask's regions and the matching windows now. Returns whether they
    /// changed (the frame's cover list is only written then: the encoder keeps the previous one).
    private func updateCovers(force: Bool) -> Bool {
        guard !options.mask.isEmpty else { return false }
        guard windowMasks.refresh() || force else { return false }
        var rects = options.mask.regions
        if windowMasks.isActive {
            let origin = captureOriginInRoot()
            for window in windowMasks.covered {
                rects.append(PixelRect(x: window.x - origin.x, y: window.y - origin.y, width: window.width, height: window.height))
            }
        }
        return frame.covers.set(rects, windows: windowMasks.covered.count, within: frame.bounds)
    }

    /// Where the captured area's top-left corner is on the root window.
    private func captureOriginInRoot() -> (x: Int, y: Int) {
        guard drawable != connection.root else { return origin }
        var x: Int32 = 0, y: Int32 = 0
        var child: Window = 0
        guard XTranslateCoordinates(connection.display, drawable, connection.root, 0, 0, &x, &y, &child) != 0 else { return origin }
        return (Int(x) + origin.x, Int(y) + origin.y)
    }

    // MARK: Events

    private func setUpEvents() throws(X11CaptureError) {
        let display = connection.display
        var errorBase: Int32 = 0
        if XDamageQueryExtension(display, &damageEventBase, &errorBase) != 0 {
            damage = XDamageCreate(display, drawable, Int32(XDamageReportDeltaRectangles))
        } else {
            logger.warning("the X server has no DAMAGE extension: every tick is captured and encoded")
        }
        if options.drawsCursor {
            if XFixesQueryExtension(display, &fixesEventBase, &errorBase) != 0 {
                XFixesSelectCursorInput(display, connection.root, UInt(XFixesDisplayCursorNotifyMask))
            } else {
                logger.warning("the X server has no XFIXES extension: the pointer is not drawn")
            }
        }
        // Size changes of the root (RandR) or the window, and the window's destruction; with window masks, every
        // top-level window's life (WindowMaskTracker).
        XSelectInput(display, connection.root, StructureNotifyMask | (windowMasks.isActive ? WindowMaskTracker.rootEvents : 0))
        if drawable != connection.root {
            let code = connection.errorCode { XSelectInput(display, drawable, StructureNotifyMask) }
            if code != 0 { throw X11CaptureError(.unknownWindow, "there is no window \(hex(drawable)) on \(connection.name)") }
        }
        XSync(display, 0)
    }

    /// Reads all queued events. Returns whether anything inside the captured area was damaged.
    private func drainEvents() -> Bool {
        let display = connection.display
        var damaged = false
        var event = XEvent()
        while XPending(display) > 0 {
            XNextEvent(display, &event)
            let type = event.type
            if damage != 0 && type == damageEventBase + XDamageNotify {
                let area = withUnsafePointer(to: &event) {
                    $0.withMemoryRebound(to: XDamageNotifyEvent.self, capacity: 1) { $0.pointee.area }
                }
                let rect = PixelRect(
                    x: Int(area.x) - origin.x, y: Int(area.y) - origin.y, width: Int(area.width),
                    height: Int(area.height)
                ).intersection(frame.bounds)
                if !rect.isEmpty {
                    damaged = true
                    damagedRects.add(rect, within: frame.bounds)
                }
            } else if fixesEventBase != 0 && type == fixesEventBase + XFixesCursorNotify {
                cursorShapeChanged = true
            } else if type == ConfigureNotify && (event.xconfigure.window == connection.root || event.xconfigure.window == drawable) {
                geometryMayHaveChanged = true
            } else if type == DestroyNotify && event.xdestroywindow.window == drawable && drawable != connection.root {
                windowDestroyed = true
            }
            windowMasks.note(event)
        }
        return damaged
    }

    private func copyChangedRects() {
        let rowStride = frame.bytesPerRow
        _ = grabber.withPixels { source, sourceStride in
            frame.withUnsafeMutableBytes { destination in
                guard let target = destination.baseAddress else { return }
                for rect in frame.changedRects {
                    let clipped = rect.intersection(frame.bounds)
                    if clipped.isEmpty { continue }
                    for row in clipped.y..<clipped.maxY {
                        (target + row * rowStride + clipped.x * 4).copyMemory(
                            from: source + row * sourceStride + clipped.x * 4, byteCount: clipped.width * 4)
                    }
                }
            }
        }
    }

    private func queryPointer() -> (x: Int, y: Int)? {
        var rootReturn: Window = 0, childReturn: Window = 0
        var rootX: Int32 = 0, rootY: Int32 = 0, windowX: Int32 = 0, windowY: Int32 = 0
        var mask: UInt32 = 0
        let sameScreen = XQueryPointer(
            connection.display, drawable, &rootReturn, &childReturn, &rootX, &rootY, &windowX, &windowY, &mask)
        guard sameScreen != 0 else { return nil }
        return (Int(windowX) - origin.x, Int(windowY) - origin.y)
    }

    // MARK: Geometry

    private struct Geometry {
        var drawable: Drawable
        var origin: (x: Int, y: Int)
        var size: (width: Int, height: Int)
    }

    /// Re-reads the target's geometry after a configure event. Returns whether the captured size changed.
    private func followGeometry() throws(X11CaptureError) -> Bool {
        let geometry = try Self.resolveGeometry(target, connection)
        origin = geometry.origin
        guard geometry.size != captureSize else { return false }
        logger.info("capture size changed from \(captureSize.width)×\(captureSize.height) to \(geometry.size.width)×\(geometry.size.height)")
        captureSize = geometry.size
        grabber = try ImageGrabber(
            connection: connection, width: geometry.size.width, height: geometry.size.height,
            preferSharedMemory: options.usesSharedMemory, logger: logger)
        frame.resize(width: geometry.size.width, height: geometry.size.height)
        cursor.forgetDrawn()
        return true
    }

    private static func resolveGeometry(_ target: X11CaptureTarget, _ connection: X11Connection) throws(X11CaptureError)
        -> Geometry
    {
        let display = connection.display
        let rootSize = try windowSize(connection.root, connection)
        switch target {
        case .rootWindow:
            return Geometry(drawable: connection.root, origin: (0, 0), size: rootSize)
        case .region(let region):
            let screen = PixelRect(x: 0, y: 0, width: rootSize.width, height: rootSize.height)
            guard region.intersection(screen) == region, region.width >= 2, region.height >= 2 else {
                throw X11CaptureError(
                    .badRegion,
                    "region \(region) is not inside the \(rootSize.width)×\(rootSize.height) screen of \(connection.name)")
            }
            return Geometry(drawable: connection.root, origin: (region.x, region.y), size: (region.width, region.height))
        case .monitor(let index):
            var count: Int32 = 0
            guard let monitors = XRRGetMonitors(display, connection.root, 1, &count) else {
                throw X11CaptureError(.missingExtension, "the X server \(connection.name) has no RandR monitors")
            }
            defer { XRRFreeMonitors(monitors) }
            guard index >= 0, index < Int(count) else {
                throw X11CaptureError(
                    .unknownMonitor, "there is no monitor \(index) on \(connection.name): it has \(count) (numbered from 0)")
            }
            let monitor = monitors[index]
            return Geometry(
                drawable: connection.root, origin: (Int(monitor.x), Int(monitor.y)),
                size: (Int(monitor.width), Int(monitor.height)))
        case .monitorNamed(let name):
            let monitor = try X11Inventory.monitor(named: name, on: connection)
            return Geometry(drawable: connection.root, origin: (monitor.x, monitor.y), size: (monitor.width, monitor.height))
        case .windowMatching(let pattern):
            let window = try X11Inventory.window(matching: pattern, on: connection)
            return try resolveGeometry(.window(window.id), connection)
        case .window(let id):
            let window = Window(id)
            guard id != 0, let size = try? windowSize(window, connection) else {
                throw X11CaptureError(.unknownWindow, "there is no window \(hex(window)) on \(connection.name)")
            }
            return Geometry(drawable: window, origin: (0, 0), size: size)
        }
    }

    private static func windowSize(_ window: Window, _ connection: X11Connection) throws(X11CaptureError)
        -> (width: Int, height: Int)
    {
        var attributes = XWindowAttributes()
        var status: Int32 = 0
        let code = connection.errorCode { status = XGetWindowAttributes(connection.display, window, &attributes) }
        try connection.checkAlive()
        guard status != 0, code == 0 else {
            throw X11CaptureError(.unknownWindow, "there is no window \(hex(window)) on \(connection.name)")
        }
        return (Int(attributes.width), Int(attributes.height))
    }

    private func grabFailed(_ code: Int32) throws {
        try connection.checkAlive()
        if drawable != connection.root {
            guard (try? Self.windowSize(drawable, connection)) != nil else {
                throw X11CaptureError(.windowClosed, "the captured window \(hex(drawable)) was closed")
            }
            throw X11CaptureError(
                .captureFailed,
                "cannot read window \(hex(drawable)) (X error \(code)): it must be mapped and fully on screen")
        }
        throw X11CaptureError(.captureFailed, "cannot read the screen of \(connection.name) (X error \(code))")
    }
}

private func samePosition(_ a: (x: Int, y: Int)?, _ b: (x: Int, y: Int)?) -> Bool {
    switch (a, b) {
    case (nil, nil): true
    case let (a?, b?): a == b
    default: false
    }
}

private func hex(_ window: Window) -> String { "0x" + String(window, radix: 16) }

@available(*, unavailable, message: "owns an Xlib Display, which belongs to one thread at a time")
extension XShmFrameSource: Sendable {}
