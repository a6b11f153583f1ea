# screenpub — the two commands of the README are `make demo` and `make test`.
SWIFT ?= swift

.PHONY: deps build release deb demo test bench clean

deps:
	scripts/install-deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# out/screenpub_VERSION_ARCH.deb: static-runtime release binaries, systemd user units, man pages,
# completions, the viewer; Depends: from dpkg-shlibdeps. Prints the package's path.
deb: deps
	packaging/deb/build.sh

# Record the screen (a virtual one when there is no $$DISPLAY) to out/share.webm.
demo:
	scripts/demo.sh

# The whole test suite: real Xvfb, real libvpx/libyuv, real libavformat, ffprobe, relays and headless Chromium;
# the .deb is built first, and the packaging tests check it (contents, lintian, that its binaries run).
# In parallel; Swift Testing only (there are no XCTest tests). The test bundle is run directly, as `swift test`
# runs it, because `swift test` relays its output through a pipe and was seen to lose the last lines (the
# summary) on a loaded machine; this way the log ends with Swift Testing's own summary line.
test: deps
	$(SWIFT) build --build-tests
	packaging/deb/build.sh
	NO_COLOR=1 "$$($(SWIFT) build --show-bin-path)/screenpubPackageTests.xctest" --testing-library swift-testing

# screenpub and ffmpeg x11grab on the same Xvfb content (table with ratios), allocations per frame, then
# latency and fan-out through screenrelay.
bench: deps
	Benchmarks/run.sh
	Benchmarks/allocations.sh
	Benchmarks/relay.sh
	Benchmarks/pipewire.sh

clean:
	rm -rf .build out
