# Sourced by the test scripts that run webproof processes in the
# background: a scratch directory and the processes, both removed on exit,
# and the wait for a process's `{"event":"listening",...}` line.
#
# Sets $tmp; push each background pid onto `pids`.

tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# Wait for the listening line in FILE and print its FIELD.
listening() { # file field
    for _ in $(seq 1 200); do
        if grep -q '"listening"' "$1" 2>/dev/null; then
            node -e 'const l=require("fs").readFileSync(process.argv[1],"utf8").split("\n").find(x=>x.includes("\"listening\""));console.log(JSON.parse(l)[process.argv[2]])' "$1" "$2"
            return
        fi
        sleep 0.1
    done
    echo "$(basename "$0"): no listening line in $1" >&2
    cat "$1" >&2
    return 1
}
