# The capture's working directory (removed on exit) and name, from $host and the time.
host=$(printf '%s' "${host:-host}" | tr -c 'A-Za-z0-9.-' '_' | cut -c 1-64)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
name="nictune-@OS@-$host-$stamp"
work=$(mktemp -d "${TMPDIR:-/tmp}/nictune-capture.XXXXXX") || {
	echo "nictune-capture: cannot create a temporary directory; set TMPDIR to a writable one" >&2
	exit 1
}
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
dir="$work/$name"
mkdir "$dir" || exit 1
