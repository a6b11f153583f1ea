#!/usr/bin/env bash
# Installs the Debian packages screenpub needs to build, test, run its demo and its benchmark.
# Idempotent: does nothing when everything is already installed. Needs root (or sudo).
set -euo pipefail

packages=(
  # build: system libraries linked by the Swift package
  pkg-config libx11-dev libxext-dev libxdamage-dev libxfixes-dev libxrandr-dev
  libvpx-dev libaom-dev libopenh264-dev libyuv-dev libavformat-dev libavcodec-dev libavutil-dev libsqlite3-dev libpipewire-0.3-dev libopus-dev
  libportal-dev libglib2.0-dev libwayland-dev
  # WHIP: GStreamer's webrtcbin (bad), the RTP payloaders (good), libnice's GStreamer elements
  libgstreamer1.0-dev libgstreamer-plugins-bad1.0-dev gstreamer1.0-plugins-bad gstreamer1.0-plugins-good gstreamer1.0-nice
  # tests and demo: a virtual X server, X clients that draw, and ffprobe to check recordings
  xvfb x11-apps x11-utils x11-xserver-utils xdotool ffmpeg
  # tests: the browser viewer runs in a real headless Chromium; systemd-analyze checks the user units
  chromium systemd
  # tests: the viewer pages in the two other engines: Firefox ESR (driven over its own WebDriver BiDi) and
  # WebKitGTK (its MiniBrowser, driven by WebKitWebDriver), which decodes through GStreamer: libav's decoders
  # (avdec_h264, avdec_av1) beside those of plugins-good and -bad
  firefox-esr webkit2gtk-driver gstreamer1.0-libav
  # tests: a private PipeWire (its own runtime dir and session bus) for Wayland-style capture, the real
  # ScreenCast portal frontend (with its permission store) and Python GI for the test portal backend
  dbus-daemon pipewire pipewire-bin wireplumber xdg-desktop-portal python3-gi gir1.2-glib-2.0
  # tests: a real compositor, GNOME's mutter headless, its portal backend, and a GTK 3 window drawn on it;
  # a real X window manager (privacy masks find windows inside its frames)
  mutter xdg-desktop-portal-gnome gir1.2-gtk-3.0 python3-gi-cairo openbox
  # tests: the other two Wayland desktop families with their own portals: wlroots (sway, xdg-desktop-portal-wlr;
  # the tests compile a small shim for xdpw with cc) and KDE (KWin headless, xdg-desktop-portal-kde, which needs
  # Qt's Wayland platform)
  sway xdg-desktop-portal-wlr kwin-wayland xdg-desktop-portal-kde qtwayland5 gcc libc6-dev
  # tests: a test CA's certificates (openssl) and the reverse-proxy recipes run by a real nginx and Caddy
  openssl nginx-light caddy
  # tests: a real SFU (Janus's VideoRoom) in a network namespace (iproute2), with a WHIP front and a viewer
  # that decodes through GStreamer (Python GI)
  # (and libav's H.264 decoder, gstreamer1.0-libav)
  janus iproute2 gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0 gstreamer1.0-libav
  # tests: node runs the browser viewer's wire.js tests without a page
  nodejs
  # tests: an independent ID3 reader for the timed metadata in HLS segments; GStreamer's gst-launch-1.0, whose
  # hlsdemux2 plays the relay's HLS as another player would, and its H.264 decoder (avdec_h264) an H.264 share's
  python3-mutagen gstreamer1.0-tools gstreamer1.0-libav
  # benchmark: GNU time for CPU seconds and peak RSS; valgrind's callgrind for the relay's instructions per frame
  time bc valgrind
  # make deb: static Foundation links libcurl; dpkg-shlibdeps computes Depends:; lintian and
  # desktop-file-validate check the package and the autostart entry
  libcurl4-openssl-dev dpkg-dev binutils lintian desktop-file-utils man-db
)
# `--bench`: also what the benchmarks compare against on PipeWire (GStreamer's pipewiresrc and vp9enc), and x264.
if [ "${1:-}" = "--bench" ]; then
  packages+=(gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-pipewire)
  # Benchmarks/h264.sh's library probe: libx264 beside openh264
  packages+=(libx264-dev)
fi
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
