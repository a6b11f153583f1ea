# screenpub — the two commands of the README are `make demo` and `make test`.
SWIFT ?= swift

.PHONY: deps build release deb demo test bench fuzz soak clean

deps:
	scripts/install-deps.sh

build: deps
	$(SWIFT) build

# The one release build (a static Swift runtime, as the .deb ships it), shared by make demo, make deb and make bench.
release: deps
	SWIFT=$(SWIFT) scripts/release-build.sh screenpub screenrelay screensub

# out/screenpub_VERSION_ARCH.deb: static-runtime release binaries, systemd user units, man pages,
# completions, the viewer; Depends: from dpkg-shlibdeps. Prints the package's path.
deb: deps
	packaging/deb/build.sh

# Record the screen (a virtual one when there is no $$DISPLAY) to out/share.webm.
demo:
	scripts/demo.sh

# The whole test suite: real Xvfb, real libvpx/libyuv, real libavformat, ffprobe, relays and headless Chromium;
# the .deb, the benchmarks' tools and the relay they count instructions of (in the same release build: make bench
# builds) and the fuzz target are built first (the packaging tests check the .deb: contents, lintian, that its
# binaries run; a short fuzz run replays the corpus; every benchmark script has a smoke run).
# In parallel; Swift Testing only (there are no XCTest tests), so XCTest prints no "Executed 0 tests" line and
# the log ends with Swift Testing's summary. The test binary writes its console straight to this output
# (descriptor 3, SCREENPUB_TEST_CONSOLE_FD): swift test's relay of it loses lines on a loaded machine. Then no
# screenpub, screenrelay or screensub of the run may be left running (silent when none is). The release build's
# directory goes to the tests as BENCH_RELEASE_BIN: a `swift build` started inside `swift test` waits for the
# lock `swift test` holds on .build until the run ends.
test: deps
	$(SWIFT) build --build-tests
	packaging/deb/build.sh
	Benchmarks/fuzz.sh --build-only
	release_bin=$$(scripts/release-build.sh screenbench relaybench screenrelay) && \
	BENCH_RELEASE_BIN="$$release_bin" SCREENPUB_TEST_CONSOLE_FD=3 $(SWIFT) test --skip-build --disable-xctest 3>&1
	@scripts/no-children-left.sh "$$($(SWIFT) build --show-bin-path)"

# screenpub (AV1, VP9) and ffmpeg x11grab on the same Xvfb content (CPU, bytes, SSIM, RSS, with ratios), the
# codec choice's evidence (AV1 and VP9 by size and rate, a bit-rate sweep for bytes at equal SSIM), H.264 (openh264
# against x264, beside AV1, VP9 and ffmpeg's libx264, and what its rendition costs), 4:2:0 against
# 4:4:4 on coloured text (and the evidence for --chroma auto), allocations per frame, then latency and fan-out
# through screenrelay (and the relay's instructions per delivered frame), HLS (glass to glass, relay CPU, bytes),
# PipeWire and mutter against GStreamer, what privacy masks cost, sound, and WHIP into Janus.
bench: deps
	Benchmarks/run.sh
	Benchmarks/codecs.sh
	Benchmarks/h264.sh
	Benchmarks/chroma.sh
	Benchmarks/allocations.sh
	Benchmarks/relay.sh
	Benchmarks/relay-instructions.sh
	Benchmarks/hls.sh
	Benchmarks/pipewire.sh
	Benchmarks/masks.sh
	Benchmarks/audio.sh
	Benchmarks/whip.sh
	Benchmarks/network.sh

# libFuzzer with AddressSanitizer on the relay's wire parsers: 10^7 executions (FUZZ_RUNS, FUZZ_SECONDS).
fuzz:
	Benchmarks/fuzz.sh

# An hour of screenrelay under a 30 fps publisher and 20 subscribers (5 stalled); memory must stay flat.
soak: deps
	Benchmarks/soak.sh

clean:
	rm -rf .build out
