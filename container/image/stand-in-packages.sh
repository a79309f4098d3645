#!/bin/sh
# Installs one small local package that stands in for Debian packages the image leaves out on purpose,
# before apt-get installs the rest. Debian's python3-matplotlib depends on a Tk GUI toolkit (through
# python3-pil.imagetk) and jQuery (its web backend), and python3-fonttools on font-engineering extras
# (sympy, lxml and ICU, unicode-data, fs, brotli, lz4, ufoLib2): together about 130 MB that neither
# commands nor the code interpreter (the Agg backend, PNG/PDF/SVG figures) use. Declaring them provided
# keeps dpkg's and apt's books consistent, so a later `apt-get install` works as usual, and a command
# that needs one of them installs the real package by name. Versions are the least the dependents ask.
set -eu

dir=$(mktemp -d)
mkdir "$dir/DEBIAN"
cat > "$dir/DEBIAN/control" <<'CONTROL'
Package: sandbox-image-omissions
Version: 1
Architecture: all
Maintainer: edge-sandbox
Priority: optional
Section: misc
Provides: python3-pil.imagetk, libjs-jquery, libjs-jquery-ui, python3-sympy, python3-lxml (= 4.5.0), unicode-data (= 14.0.0), python3-fs (= 2.4.16), python3-brotli (= 1.0.9), python3-lz4 (= 1.7.4.2), python3-ufolib2 (= 0.13.1)
Description: stands in for packages the sandbox image leaves out
 Tk and jQuery (matplotlib's GUI and web backends) and fontTools' optional
 extras. Install any of them by name to get the real package.
CONTROL
dpkg-deb --build "$dir" "$dir.deb" >/dev/null
dpkg -i "$dir.deb" >/dev/null
rm -rf "$dir" "$dir.deb"
