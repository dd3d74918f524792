#!/bin/bash
# Real outputs of the real tools, captured on a Linux host in private network namespaces
# (w3p-a -- w3p-r -- w3p-b: a router namespace between two hosts, far leg at MTU 1400), for
# the tests/data samples named host-*. Needs root, iproute2, iputils ping, iperf3, ethtool.
# Usage: sudo bash tests/data/capture_host_samples.sh OUTDIR ; the namespaces are removed.
set -u
O=${1:?usage: capture_host_samples.sh OUTDIR}
mkdir -p "$O"
A="ip netns exec w3p-a"; B="ip netns exec w3p-b"; R="ip netns exec w3p-r"
cleanup() { for n in w3p-a w3p-b w3p-r; do ip netns del $n 2>/dev/null; done; }
cleanup
for n in w3p-a w3p-b w3p-r; do ip netns add $n; done
ip link add w3pa0 netns w3p-a type veth peer name w3pr0 netns w3p-r
ip link add w3pr1 netns w3p-r type veth peer name w3pb0 netns w3p-b
$A ip addr add 10.99.0.1/24 dev w3pa0; $A ip link set w3pa0 up; $A ip link set lo up
$R ip addr add 10.99.0.254/24 dev w3pr0; $R ip link set w3pr0 up
$R ip addr add 10.99.1.254/24 dev w3pr1; $R ip link set w3pr1 mtu 1400 up
$B ip addr add 10.99.1.2/24 dev w3pb0; $B ip link set w3pb0 mtu 1400 up; $B ip link set lo up
$A ip route add default via 10.99.0.254; $B ip route add default via 10.99.1.254
$R sysctl -qw net.ipv4.ip_forward=1
sleep 2
$A ping -M do -s 1372 -c 3 -W 1 -w 5 10.99.1.2 > $O/ping-ok.txt 2>&1; echo "rc=$?" >> $O/rc.txt
$A ping -M do -s 1472 -c 3 -W 1 -w 5 10.99.1.2 > $O/ping-frag.txt 2>&1; echo "frag rc=$?" >> $O/rc.txt
$A ping -M do -s 1473 -c 3 -W 1 -w 5 10.99.0.254 > $O/ping-local.txt 2>&1; echo "local rc=$?" >> $O/rc.txt
$A ping -c 3 -W 1 -w 5 10.99.0.77 > $O/ping-unreach.txt 2>&1; echo "unreach rc=$?" >> $O/rc.txt
$A ping -c 2 -W 1 -w 3 -I nosuch0 10.99.1.2 > $O/ping-nodev.txt 2>&1; echo "nodev rc=$?" >> $O/rc.txt
$B iperf3 -s -D -p 5201 -I "$O/iperf.pid" >/dev/null 2>&1; sleep 1
$A iperf3 -c 10.99.1.2 -p 5201 -t 2 -J > $O/iperf3-tcp.json 2>&1; echo "iperf tcp rc=$?" >> $O/rc.txt
$A iperf3 -c 10.99.1.2 -p 5201 -t 2 -P 2 -R -J > $O/iperf3-R-P2.json 2>&1; echo "iperf R rc=$?" >> $O/rc.txt
$A iperf3 -c 10.99.1.2 -p 5201 -t 2 -u -b 50M -J > $O/iperf3-udp.json 2>&1; echo "iperf udp rc=$?" >> $O/rc.txt
$A iperf3 -c 10.99.1.2 -p 5201 -t 2 --bidir -J > $O/iperf3-bidir.json 2>&1; echo "iperf bidir rc=$?" >> $O/rc.txt
$A iperf3 -c 10.99.1.2 -p 5999 -t 2 -J > $O/iperf3-refused.json 2>&1; echo "iperf refused rc=$?" >> $O/rc.txt
kill "$(cat "$O/iperf.pid")" 2>/dev/null
$A ethtool w3pa0 > $O/ethtool-veth.txt 2>&1; echo "ethtool rc=$?" >> $O/rc.txt
$A ethtool -S w3pa0 > $O/ethtool-S-veth.txt 2>&1; echo "ethtool S rc=$?" >> $O/rc.txt
$A ethtool --show-fec w3pa0 > $O/ethtool-fec-veth.txt 2>&1; echo "ethtool fec rc=$?" >> $O/rc.txt
$A ethtool -m w3pa0 > $O/ethtool-m-veth.txt 2>&1; echo "ethtool m rc=$?" >> $O/rc.txt
$A ip -j addr show > $O/ip-j-addr.json 2>&1
$A ip -j -d addr show dev w3pa0 > $O/ip-j-d-addr.json 2>&1
$A ip -j -4 addr show > $O/ip-j-4-addr.json 2>&1
$A ip -j link show > $O/ip-j-link.json 2>&1
$A sh -c 'ip -j addr show dev w3pa0 && ip -j addr show dev lo' > $O/ip-j-per-dev.json 2>&1
$A ip -j addr show dev nosuch0 > $O/ip-j-nodev.txt 2>&1; echo "ip nodev rc=$?" >> $O/rc.txt
$R ip -j -p addr show > $O/ip-j-p-router.json 2>&1
cleanup
# The suite's own ping form (-M do -s N -I <netdev> -c -W -w) on a direct 9000-byte link.
for n in w3p-a w3p-b; do ip netns add $n; done
ip link add w3pa0 netns w3p-a type veth peer name w3pb0 netns w3p-b
$A ip addr add 10.99.0.1/24 dev w3pa0; $A ip link set w3pa0 mtu 9000 up
$B ip addr add 10.99.0.2/24 dev w3pb0; $B ip link set w3pb0 mtu 9000 up
sleep 1
$A ping -M do -s 8972 -I w3pa0 -c 3 -W 1 -w 5 10.99.0.2 > $O/ping-I-dev-jumbo.txt 2>&1
$A ping -M do -s 8973 -I w3pa0 -c 3 -W 1 -w 5 10.99.0.2 > $O/ping-I-dev-local-9000.txt 2>&1
cleanup
echo done
