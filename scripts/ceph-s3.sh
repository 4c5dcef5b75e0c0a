#!/bin/bash
# A single-node Ceph (one monitor, one OSD on memstore, a RADOS Gateway) on loopback, for the S3
# adapter's tests and benchmark. Everything lives under $CEPH_DIR (no /etc/ceph), auth is off, pools
# have size 1. Starts in about 15 s on 2 idle cores.
#
# Needs Debian's ceph-mon ceph-osd radosgw ceph-common (test/setup/ceph-s3.ts installs them).
# Usage: CEPH_DIR=/some/empty/dir CEPH_PORT_BASE=27400 scripts/ceph-s3.sh start
#        CEPH_DIR=/same/dir scripts/ceph-s3.sh stop | restart-gateway | kill-gateway
# Ports: mon v2 base+0, mon v1 base+1, daemons base+10..base+49, S3 at http://127.0.0.1:$((base+80)).
# S3 user: access key AKTEST, secret SKTEST; user "limited" (AKLIMITED, SKLIMITED) owns nothing, for
# tests of bucket policies. PIDs go to $CEPH_DIR/pids (gateway: $CEPH_DIR/rgw.pid).
set -euo pipefail
D=${CEPH_DIR:?set CEPH_DIR to a working directory}
C=$D/ceph.conf
cmd=${1:-start}

rgw_start() {
  radosgw -c "$C" -n client.rgw.a
  for _ in $(seq 1 600); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$(cat "$D/rgw.port")") 2>/dev/null; then break; fi
    sleep 0.1
  done
  pgrep -f -- "-c $C -n client.rgw.a" | head -1 > "$D/rgw.pid"
}

case "$cmd" in
stop)
  [ -f "$D/pids" ] && for p in $(cat "$D/pids") $(cat "$D/rgw.pid" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
  exit 0 ;;
kill-gateway)
  kill -9 "$(cat "$D/rgw.pid")"; exit 0 ;;
restart-gateway)
  rgw_start; exit 0 ;;
start) ;;
*) echo "unknown command $cmd" >&2; exit 2 ;;
esac

BASE=${CEPH_PORT_BASE:-27400}
rm -rf "$D"; mkdir -p "$D"/{run,log,mon,osd0,mgr,rgw}
FSID=$(cat /proc/sys/kernel/random/uuid)
echo $((BASE + 80)) > "$D/rgw.port"
cat > "$C" <<CONF
[global]
fsid = $FSID
mon host = [v2:127.0.0.1:$BASE,v1:127.0.0.1:$((BASE + 1))]
public addr = 127.0.0.1
ms bind port min = $((BASE + 10))
ms bind port max = $((BASE + 49))
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
ms client mode = crc
ms mon service mode = crc
ms service mode = crc
ms cluster mode = crc
ms mon cluster mode = crc
run dir = $D/run
admin socket = $D/run/\$name.asok
log file = $D/log/\$name.log
keyring = $D/keyring
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
mon max pg per osd = 1000
[mon]
mon data = $D/mon
mon cluster log file = $D/log/cluster.log
[osd]
osd data = $D/osd0
osd objectstore = memstore
memstore device bytes = 1073741824
osd memory target = 939524096
[client.rgw.a]
rgw data = $D/rgw
rgw frontends = beast endpoint=127.0.0.1:$((BASE + 80))
rgw dns name = 127.0.0.1
CONF
ceph-authtool --create-keyring "$D/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$BASE,v1:127.0.0.1:$((BASE + 1))]" "$D/monmap" >/dev/null
ceph-mon -c "$C" --mkfs -i a --monmap "$D/monmap" --keyring "$D/keyring"
ceph-mon -c "$C" -i a
OSD_UUID=$(cat /proc/sys/kernel/random/uuid)
ID=$(ceph -c "$C" osd new "$OSD_UUID")
ceph-osd -c "$C" -i "$ID" --mkfs --osd-uuid "$OSD_UUID" >/dev/null 2>&1
ceph-osd -c "$C" -i "$ID"
until ceph -c "$C" osd stat 2>/dev/null | grep -q '1 up'; do sleep 0.2; done
rgw_start
radosgw-admin -c "$C" user create --uid=test --display-name=test --access-key=AKTEST --secret=SKTEST >/dev/null
# A second user with no buckets of its own, for tests of what bucket policies grant it.
radosgw-admin -c "$C" user create --uid=limited --display-name=limited --access-key=AKLIMITED --secret=SKLIMITED >/dev/null
pgrep -f -- "-c $C " | tr '\n' ' ' > "$D/pids"
echo "S3 at http://127.0.0.1:$((BASE + 80))"
