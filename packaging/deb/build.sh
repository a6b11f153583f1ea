#!/usr/bin/env bash
# Builds out/screenpub_VERSION_ARCH.deb (`make deb`): release binaries with the Swift runtime linked in
# statically (the package needs no Swift toolchain), the systemd user units, the autostart entry, man pages
# and shell completions generated from the commands' own argument definitions, the viewer pages, and
# Depends: computed by dpkg-shlibdeps from the libraries the binaries really link.
set -euo pipefail
cd "$(dirname "$0")/../.."
SWIFT=${SWIFT:-swift}
products=(screenpub screenrelay screensub)

echo "building release binaries (static Swift runtime)…" >&2
bin=$(scripts/release-build.sh "${products[@]}")
version=$("$bin/screenpub" --version)
arch=$(dpkg --print-architecture)
package="out/screenpub_${version}_${arch}.deb"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
stage="$root/screenpub"
install -d "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/lib/systemd/user" "$stage/usr/share/man/man1" \
  "$stage/usr/share/screenpub/viewer" "$stage/usr/share/doc/screenpub/examples" \
  "$stage/usr/share/bash-completion/completions" "$stage/usr/share/zsh/vendor-completions" \
  "$stage/usr/share/fish/vendor_completions.d"

for product in "${products[@]}"; do
  install -m755 "$bin/$product" "$stage/usr/bin/$product"
  strip --strip-unneeded --remove-section=.comment --remove-section=.note "$stage/usr/bin/$product"
  # Sourced by bash-completion, not run: no #! line.
  "$bin/$product" --generate-completion-script bash | sed '1{/^#!/d}' > "$stage/usr/share/bash-completion/completions/$product"
  "$bin/$product" --generate-completion-script zsh > "$stage/usr/share/zsh/vendor-completions/_$product"
  "$bin/$product" --generate-completion-script fish > "$stage/usr/share/fish/vendor_completions.d/$product.fish"
done
chmod 644 "$stage"/usr/share/bash-completion/completions/* "$stage"/usr/share/zsh/vendor-completions/* \
  "$stage"/usr/share/fish/vendor_completions.d/*

# Man pages from what each command says about itself (`--experimental-dump-help`), by our manual-page tool:
# UTF-8 kept, inverted flags as one entry, examples, and a pointer to the documentation installed below.
$SWIFT build --product manual-page >/dev/null
manual_date=$(date -u -d @"${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}" +%Y-%m-%d)
for product in "${products[@]}"; do
  "$($SWIFT build --show-bin-path)/manual-page" "$bin/$product" --date "$manual_date" | gzip -9n > "$stage/usr/share/man/man1/$product.1.gz"
done

install -m644 packaging/systemd/screenpub.service packaging/systemd/screenrelay.service "$stage/usr/lib/systemd/user/"
# Not in /etc/xdg/autostart: sharing starts only for a user who asks for it (README, "Run it as a service").
install -m644 packaging/autostart/screenpub.desktop "$stage/usr/share/screenpub/screenpub.desktop"
install -m644 Sources/ScreenRelay/Viewer/* "$stage/usr/share/screenpub/viewer/"
# The WHIP viewer: static files to serve beside an SFU (README, "Publishing into an SFU").
install -d "$stage/usr/share/screenpub/whip-viewer"
install -m644 packaging/whip-viewer/* "$stage/usr/share/screenpub/whip-viewer/"
install -m644 packaging/examples/screenpub.toml packaging/examples/screenrelay.toml packaging/examples/nginx-screenrelay.conf packaging/examples/nginx-hls.conf packaging/examples/nginx-hls-origin.conf \
  packaging/examples/Caddyfile "$stage/usr/share/doc/screenpub/examples/"
install -m644 packaging/deb/copyright "$stage/usr/share/doc/screenpub/copyright"
# The README and docs/ (protocol, architecture, performance, recording), compressed as Debian's policy asks.
install -d "$stage/usr/share/doc/screenpub/docs"
gzip -9nc README.md > "$stage/usr/share/doc/screenpub/README.md.gz"
for doc in docs/*.md; do gzip -9nc "$doc" > "$stage/usr/share/doc/screenpub/docs/$(basename "$doc").gz"; done
chmod 644 "$stage/usr/share/doc/screenpub/README.md.gz" "$stage"/usr/share/doc/screenpub/docs/*.gz
sed "s/@VERSION@/$version/; s/@DATE@/$(date -R -u -d "$manual_date")/" \
  packaging/deb/changelog | gzip -9n > "$stage/usr/share/doc/screenpub/changelog.gz"

# Depends: from the shared libraries the binaries need (dpkg-shlibdeps wants a debian/control beside it).
mkdir -p "$root/debian"
printf 'Source: screenpub\n\nPackage: screenpub\nArchitecture: any\n' > "$root/debian/control"
depends=$(cd "$root" && dpkg-shlibdeps -O $(printf -- '-escreenpub/usr/bin/%s ' "${products[@]}") 2>/dev/null \
  | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "make deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
rm -rf "$root/debian"

installed_size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed "s/@VERSION@/$version/; s/@ARCH@/$arch/; s/@DEPENDS@/$depends/; s/@SIZE@/$installed_size/" \
  packaging/deb/control > "$stage/DEBIAN/control"

find "$stage" -type d -exec chmod 755 {} +
mkdir -p out
dpkg-deb --root-owner-group -Zxz --build "$stage" "$package" >&2
echo "$package"
