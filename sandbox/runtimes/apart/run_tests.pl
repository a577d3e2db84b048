# The tests' process of a Perl program suite run apart from the program (sandbox/runner.py run_suite_apart; after
# plain_data.pl). It reads the tests' code on stdin and runs it; the subs the tests name that they do not define are
# the program's: asked for on fd 4, answered on fd 3, called there in the tests' context. Modules come only from
# Perl's own directories. fd 5 hears that the tests all ran, when the run ends with status 0.
package JudgeTests;

BEGIN { @INC = grep { m{\A/} && !m{\A/(?:sandbox|tmp)(?:/|\z)} } @INC }

open(my $replies, '<&=', 3) or die "fd 3: $!";
open(my $requests, '>&=', 4) or die "fd 4: $!";
binmode $_ for $replies, $requests;

sub ask {
    my ($request) = @_;
    PlainData::send_message($requests, $request);
    my $reply = PlainData::receive($replies);
    die "the program ended before its tests did\n" unless defined $reply && ref $reply->[0] eq 'HASH';
    return $reply->[0];
}

# Array and hash references the sub changed in place, changed so here too.
sub copy_back {
    my ($args, $changed) = @_;
    return unless ref $changed eq 'ARRAY' && @$changed == @$args;
    for my $index (0 .. $#$args) {
        my ($arg, $now) = ($args->[$index], $changed->[$index]);
        if (ref $arg eq 'ARRAY' && ref $now eq 'ARRAY') { @$arg = @$now }
        elsif (ref $arg eq 'HASH' && ref $now eq 'HASH') { %$arg = %$now }
    }
}

sub stub {
    my ($name) = @_;
    return sub {
        my $context = wantarray ? 'list' : defined wantarray ? 'scalar' : 'void';
        my $reply = ask({call => $name, args => [@_], context => $context});
        die "in the program: $reply->{error}" if exists $reply->{error};
        copy_back([@_], $reply->{args});
        my @value = ref $reply->{value} eq 'ARRAY' ? @{$reply->{value}} : ();
        return $context eq 'list' ? @value : $value[-1];
    };
}

sub define_program_subs {
    my ($code) = @_;
    my %declared = map { ($_ => 1) } $code =~ /\bsub\s+([A-Za-z_]\w*)/g;
    my %seen;
    no strict 'refs';
    my @wanted = grep { !$seen{$_}++ && !$declared{$_} && !defined &{"main::$_"} }
        $code =~ /([A-Za-z_]\w*)/g;
    my $defined = ask({names => \@wanted})->{defined};
    for my $name (@wanted) {
        *{"main::$name"} = stub($name) if ref $defined eq 'HASH' && $defined->{$name};
    }
}

my $tests = do { local $/; <STDIN> };
define_program_subs($tests);

package main;

END {
    if ($? == 0) {
        open(my $said, '>&=', 5) or die "fd 5: $!";
        syswrite($said, 'done');
    }
}
{
    no strict;  # the tests as they would run after the program, which turns on no pragma for them
    no warnings;
    eval "#line 1 tests.pl\n$tests";
}
die $@ if $@;
