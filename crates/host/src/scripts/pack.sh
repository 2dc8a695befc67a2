# The tarball, and how to read it back.
out="$outdir/$name.tar.gz"
if ! tar -czf "$out" -C "$work" "$name"; then
	echo "nictune-capture: could not write $out" >&2
	exit 1
fi
echo "nictune-capture: wrote $out"
echo "read it with: tar -xzf $name.tar.gz && @READ@ $name"
