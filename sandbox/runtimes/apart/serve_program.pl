# The program's process of a Perl program suite run apart from its tests (sandbox/runner.py run_suite_apart; after
# plain_data.pl): the program runs as the main script, then answers the tests' requests on fd 3 with replies on fd 4
# until the tests' process is done. Its subs are called here, in the context the test called them in; what they
# return or die with goes back as plain data.
package JudgeProgram;

sub answer {
    my ($request) = @_;
    return {error => 'a request that is not an object'} unless ref $request eq 'HASH';
    no strict 'refs';
    if (ref $request->{names} eq 'ARRAY') {
        my %defined = map { ($_ => {function => JSON::PP::true}) }
            grep { /\A[A-Za-z_]\w*\z/ && defined &{"main::$_"} } @{$request->{names}};
        return {defined => \%defined};
    }
    my $name = $request->{call} // '';
    return {error => "the program has no sub $name"} unless $name =~ /\A[A-Za-z_]\w*\z/ && defined &{"main::$name"};
    my @args = @{$request->{args} // []};
    my $context = $request->{context} // 'list';
    my @value = eval {
        $context eq 'list' ? &{"main::$name"}(@args) : scalar &{"main::$name"}(@args);
    };
    return {error => "$@"} if $@;
    return {value => \@value, args => \@args};
}

sub serve {
    open(my $requests, '<&=', 3) or die "fd 3: $!";
    open(my $replies, '>&=', 4) or die "fd 4: $!";
    binmode $_ for $requests, $replies;
    while (defined(my $request = PlainData::receive($requests))) {
        my $reply = answer($request->[0]);
        eval { PlainData::send_message($replies, $reply); 1 } or PlainData::send_message(
            $replies, {error => "the program answered with what is not plain data: $@"});
    }
}

package main;

{
    my $judge_program = shift @ARGV;
    local $0 = $judge_program;
    my $judge_done = do "./$judge_program";
    die $@ if $@;
}
JudgeProgram::serve();
