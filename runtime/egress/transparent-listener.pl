# The proxy's listener in a sandbox's network namespace, made before the namespace helper starts:
# a TCP socket on 127.0.0.1 (a port of the kernel's choosing) with IP_TRANSPARENT set, which TPROXY
# needs to hand it connections to any address (firewall-table.ts). Node cannot set that option, so
# this makes the socket, leaves it open across exec, and becomes the helper, whose first argument
# after the script is this socket's descriptor.
#
# argv: <node> <helper script> <helper arguments...>
use strict;
use warnings;
use Socket qw(PF_INET SOCK_STREAM IPPROTO_IP SOL_SOCKET SO_REUSEADDR SOMAXCONN inet_aton pack_sockaddr_in);
use Fcntl qw(F_SETFD);

# linux/in.h: not exported by Socket.
use constant IP_TRANSPARENT => 19;

socket(my $listener, PF_INET, SOCK_STREAM, 0) or die "socket: $!\n";
setsockopt($listener, IPPROTO_IP, IP_TRANSPARENT, 1) or die "IP_TRANSPARENT: $!\n";
setsockopt($listener, SOL_SOCKET, SO_REUSEADDR, 1) or die "SO_REUSEADDR: $!\n";
bind($listener, pack_sockaddr_in(0, inet_aton("127.0.0.1"))) or die "bind: $!\n";
listen($listener, SOMAXCONN) or die "listen: $!\n";
fcntl($listener, F_SETFD, 0) or die "fcntl: $!\n";
my ($node, $helper, @rest) = @ARGV;
exec { $node } $node, $helper, fileno($listener), @rest or die "exec $node: $!\n";
