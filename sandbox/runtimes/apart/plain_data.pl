# Messages between a program suite's tests and the program, each in a process of its own (sandbox/runner.py
# run_suite_apart): its length (8 bytes, little-endian), then the value as JSON (JSON::PP: scalars, undef, and array
# and hash references). Plain data only: a blessed object or a code reference cannot be sent. Synchronous: a test's
# call waits for its reply.
use strict;
use warnings;
use JSON::PP ();

package PlainData;

my $MESSAGE_LIMIT = 1 << 30;
my $JSON = JSON::PP->new->utf8->allow_nonref->max_depth(1000);

sub send_message {
    my ($handle, $value) = @_;
    my $body = $JSON->encode($value);
    my $data = pack('Q<', length $body) . $body;
    while (length $data) {
        my $written = syswrite($handle, $data);
        die "the other process is gone\n" unless $written;
        substr($data, 0, $written) = '';
    }
}

sub read_exactly {
    my ($handle, $size) = @_;
    my $data = '';
    while (length $data < $size) {
        my $got = sysread($handle, $data, $size - length $data, length $data);
        return undef unless $got;
    }
    return $data;
}

# The next message (an array reference holding it), or undef when the other side closed its end (or sent something
# cut, too big or not JSON).
sub receive {
    my ($handle) = @_;
    my $head = read_exactly($handle, 8);
    return undef unless defined $head;
    my $size = unpack('Q<', $head);
    return undef if $size > $MESSAGE_LIMIT;
    my $body = $size ? read_exactly($handle, $size) : '';
    return undef unless defined $body;
    my $value = eval { $JSON->decode($body) };
    return $@ ? undef : [$value];
}

package main;
