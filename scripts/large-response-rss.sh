#!/bin/bash
# Peak RSS and CPU time of the prover and the verifier, each its own
# process, for one response of SIZE bytes from the fixture (/bytes?size=):
#
#   cargo build --release -p webproof
#   bash scripts/large-response-rss.sh 16777216 redacted   # one byte hidden
#   bash scripts/large-response-rss.sh 16777216 revealed   # the key fast path
#
# Runs `webproof fixture`, `webproof serve` and `webproof prove --json`
# (JSONFLAG= to print text instead) under /usr/bin/time -v; prints each
# party's peak RSS, times and the prover's stats. Files stay in the
# printed directory.
# usage: large-response-rss.sh SIZE redacted|revealed [BIN]
set -u
SIZE=$1; MODE=$2; BIN=${3:-target/release/webproof}
D=$(mktemp -d /tmp/webproof-rss.XXXXXX)
echo "files in $D"
$BIN fixture --listen 127.0.0.1:0 --cert-dir $D/certs > $D/fixture.out 2>$D/fixture.err &
FPID=$!
while ! grep -q listening $D/fixture.out 2>/dev/null; do sleep 0.2; done
FADDR=$(python3 -c "import json;print(json.load(open('$D/fixture.out'))['addr'])")
FPORT=${FADDR##*:}
cat > $D/verifier.toml <<T
listen = "127.0.0.1:0"
[roots]
webpki = false
ca_certs = ["$D/certs/ca.pem"]
[policy]
allow = ["127.0.0.0/8"]
[limits]
session_timeout_secs = 7200
proof_timeout_secs = 3600
relay_timeout_secs = 600
idle_timeout_secs = 600
T
/usr/bin/time -v -o $D/verifier.time $BIN serve --config $D/verifier.toml > $D/serve.out 2>$D/serve.err &
TPID=$!
while ! grep -q listening $D/serve.out 2>/dev/null; do sleep 0.2; done
VADDR=$(python3 -c "import json;print(json.load(open('$D/serve.out'))['addr'])")
if [ $MODE = redacted ]; then REV="--reveal all --reveal hide-recv:100-101"; else REV="--reveal all"; fi
/usr/bin/time -v -o $D/prover.time $BIN prove --verifier $VADDR --url "https://localhost:$FPORT/bytes?size=$SIZE" \
  --ca-cert $D/certs/ca.pem $REV --expect-response $SIZE --timeout-secs 7200 ${JSONFLAG---json} > $D/prove.json 2>$D/prove.err
echo "prove exit $?"
VPID=$(pgrep -P $TPID)
kill -TERM $VPID; wait $TPID
kill -TERM $FPID; wait $FPID 2>/dev/null
for p in prover verifier; do
  echo "$p: $(grep -E 'Maximum resident|Elapsed \(wall|User time|System time' $D/$p.time | sed 's/^\s*//' | tr '\n' ';')"
done
[ -n "${JSONFLAG-x}" ] && python3 - <<P
import json
j=json.load(open('$D/prove.json'))
s=j['stats']; r=j['verified']['received']
print('received len',r['len'],'hidden',r['len']-sum(x['end']-x['start'] for x in r['revealed']),'stats',{k:round(v) for k,v in s.items()})
P
