# cron_jobs.pl: lancelsm scheduled by pg_cron.
#
# Two nodes run side by side against one emulator, both with
# shared_preload_libraries = 'pg_cron,lancelsm': node "cron_libpq" in
# pg_cron's default mode (each job is a libpq connection to the server) and
# node "cron_bgw" with cron.use_background_workers = on (each job is a
# background worker, where PostgreSQL's statement_timeout timer is armed
# from the server's setting before the job's own SET runs, so lancelsm's
# own clamp to statement_timeout must end the call).  On each node:
#
#  (a) a job running lancelsm_checkpoint_all() over the declared tables
#      ("steady", which converges, and "leaky", whose checkpoint fails)
#      ends as "succeeded" in cron.job_run_details (a failed table is a
#      row with ok false, not an error), the emulator saw the checkpoint's
#      flush / stats / compact calls, and the checkpoint history shows
#      steady ok; docs/operations.md's "strict" job (a DO block raising when a row
#      is not ok) ends as "failed" naming leaky only (with
#      lancelsm.share_checkpoints off: the other jobs checkpoint leaky at
#      the same moment, and lancelsm_checkpoint_all() would skip a table in
#      progress, docs/operations.md "Many sessions on one table");
#  (b) a job "SET statement_timeout = '1s'; SELECT lancelsm_checkpoint(
#      'emu', 'events')" against a server that never answers its flush ends
#      as "failed" with "canceling statement due to statement timeout",
#      within 1 s + a bound (the overshoot is reported);
#  (c) the run of that job after a failed one starts on time (consecutive
#      start_times one period apart, each at its scheduled moment);
#  (d) the API key appears nowhere in cron.job or cron.job_run_details,
#      not even for a job whose server echoes the key back in its error;
#  (e) the queries of contrib/postgres_exporter/lancelsm.yaml run and show
#      steady's stats, leaky's error (as lancelsm_table_stats last read
#      them: the table query sends no request) and the last checkpoint of each
#      table the server answered for (steady only: events and leaky never
#      got a success answer, so the history does not record them);
#  (f) no server process of either node ended by a signal.
#
# pg_cron before 1.5 (Debian 12 ships 1.4.2) schedules by the minute, so
# this test waits for minute boundaries: about two minutes in all.  With
# pg_cron 1.5 or later it uses second schedules and takes seconds.
use strict;
use warnings FATAL => 'all';

use FindBin;
use lib $FindBin::RealBin;
use LsmTap;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $TIMEOUT_S = 1;          # the hanging job's statement_timeout
my $BOUND_S = 1.0;          # allowed overshoot (generous, for loaded CI)
my $ON_TIME_S = 3.0;        # a run starts at most this late
my $TIMEOUT_MSG = 'canceling statement due to statement timeout';

# return_message on one line without the column separator
use constant MSG => q{translate(d.return_message, E'\n|', '  ')};

skip_without_pg_cron();

my $port = start_emulator();

# "steady": two buckets with L0 generations to checkpoint and a writer,
# declared for lancelsm_checkpoint_all().  "events": its flush hangs.
# "leaky": its flush fails with a message that holds the API key.
emu_reset();
emu('POST', '/_emulator/tables',
	{ name => 'steady', buckets => 2, rows_per_second => 20 });
emu('POST', '/_emulator/tables/steady/generations',
	{ count => 2, rows => 10 });
emu('POST', '/_emulator/faults',
	{ table => 'events', route => 'flush_lsm', action => 'hang', count => -1 });
emu('POST', '/_emulator/faults', {
	table => 'leaky', route => 'flush_lsm', count => -1, status => 400,
	json => { code => 4, error => "no LSM write path for key $API_KEY" } });

# cron_node: a started node with pg_cron and lancelsm preloaded (lancelsm
# alone dropped from the list, with a failure, if the node cannot start
# with it), the extensions, server "emu", a PUBLIC mapping, "steady" and
# "leaky" declared.  Returns ($node, $preloaded).
sub cron_node
{
	my ($name, $bgw) = @_;
	my $node = init_cron_node($name, qq{
cron.use_background_workers = $bgw
max_worker_processes = 32
});
	my $preloaded = 1;
	my $ok = $node->start(fail_ok => 1);
	ok($ok, "$name: starts with shared_preload_libraries = 'pg_cron,lancelsm'");
	unless ($ok)
	{
		diag("$name: the lancelsm preload broke startup; using pg_cron alone");
		$node->append_conf('postgresql.conf',
			"shared_preload_libraries = 'pg_cron'\n");
		$node->start;
		$preloaded = 0;
	}
	install_lancelsm($node, $port);
	$node->safe_psql('postgres', q{
		SELECT lancelsm_add_table('emu', 'steady', validate => false);
		SELECT lancelsm_add_table('emu', 'leaky', validate => false);
		CREATE EXTENSION pg_cron;
	}, timeout => 30);
	is($node->safe_psql('postgres', 'SHOW cron.use_background_workers'),
		$bgw, "$name: cron.use_background_workers = $bgw");
	return ($node, $preloaded);
}

my ($libpq, $libpq_preloaded) = cron_node('cron_libpq', 'off');
my ($bgw, $bgw_preloaded) = cron_node('cron_bgw', 'on');
my @nodes = ([ 'default mode', $libpq, $libpq_preloaded ],
	[ 'background workers', $bgw, $bgw_preloaded ]);

# Schedules: pg_cron 1.5 and later take "N seconds"; older ones minutes.
my ($cron_version, $seconds) = pg_cron_seconds($libpq);
my $period = $seconds ? 3 : 60;
my $schedule_ok = $seconds ? '1 seconds' : '* * * * *';
my $schedule_hang = $seconds ? "$period seconds" : '* * * * *';
diag("pg_cron $cron_version: checkpoint_all every "
	  . ($seconds ? 'second' : 'minute')
	  . ", the hanging job every $period s");

for my $n (@nodes)
{
	my (undef, $node) = @$n;
	$node->safe_psql('postgres', qq{
		SELECT cron.schedule('lsm-all', '$schedule_ok',
		  \$\$SET statement_timeout = '30s'; SELECT lancelsm_checkpoint_all()\$\$);
		SELECT cron.schedule('lsm-hang', '$schedule_hang',
		  \$\$SET statement_timeout = '${TIMEOUT_S}s'; SELECT lancelsm_checkpoint('emu', 'events')\$\$);
		SELECT cron.schedule('lsm-leaky', '$schedule_hang',
		  \$\$SET statement_timeout = '10s'; SELECT lancelsm_checkpoint('emu', 'leaky')\$\$);
		SELECT cron.schedule('lsm-strict', '$schedule_hang', \$cmd\$
SET statement_timeout = '30s';
SET lancelsm.share_checkpoints = off;
DO \$\$
DECLARE failed text;
BEGIN
  SELECT string_agg(format('%s/%s: %s %s', server, table_name, sqlstate, message), '; ')
    INTO failed FROM lancelsm_checkpoint_all() WHERE NOT ok;
  IF failed IS NOT NULL THEN
    RAISE EXCEPTION 'lancelsm checkpoints failed: %', failed;
  END IF;
END \$\$;
\$cmd\$);
	});
}

# A run has ended when its process has and pg_cron has written its last
# command's outcome.  pg_cron writes a run's status and end_time as its
# commands complete, so in background-worker mode a run still in flight
# already shows "succeeded" with the tag of a command before the last one
# ("SET") and an end_time.  And the worker's process is gone before its
# outcome is written: the scheduler reads the worker's last messages (the
# error of a failed command) only once it sees the worker stopped, on
# its next pass.  Every job here ends with a SELECT or a DO, after SETs:
# a run whose message is still "SET" has not reported its last command.
# ENDED holds for a run of cron.job_run_details d whose process (job_pid:
# the job's backend or background worker) is gone, with an end_time and
# the outcome of its last command: failed, or succeeded with another
# tag than "SET".
use constant ENDED => q{d.status IN ('succeeded', 'failed')
	AND d.end_time IS NOT NULL
	AND (d.status = 'failed' OR d.return_message IS DISTINCT FROM 'SET')
	AND NOT EXISTS (SELECT FROM pg_stat_activity a WHERE a.pid = d.job_pid)};

# finished: ended runs of a job whose status matches $status (a regex).
sub finished
{
	my ($node, $job, $status) = @_;
	my $out = $node->safe_psql('postgres', qq{
		SELECT d.status FROM cron.job_run_details d
		  JOIN cron.job j USING (jobid)
		 WHERE j.jobname = '$job' AND } . ENDED . q{
		 ORDER BY d.runid});
	return grep { /^(?:$status)$/ } split /\n/, $out;
}

# Wait (bounded) until, on both nodes, "lsm-all" succeeded once and
# "lsm-hang" and "lsm-leaky" finished twice, "lsm-strict" once.
my $limit = 2 * $period + 45;
my $until = time() + $limit;
my $done;
while (time() < $until)
{
	$done = 1;
	for my $n (@nodes)
	{
		my (undef, $node) = @$n;
		$done = 0
		  unless finished($node, 'lsm-all', 'succeeded') >= 1
		  && finished($node, 'lsm-hang', 'succeeded|failed') >= 2
		  && finished($node, 'lsm-leaky', 'succeeded|failed') >= 2
		  && finished($node, 'lsm-strict', 'succeeded|failed') >= 1;
	}
	last if $done;
	sleep(0.5);
}
ok($done, "every job ran as expected on both nodes within $limit s");

# stop scheduling before looking, so that the counts settle (the runs of
# an unscheduled job stay in cron.job_run_details: keep the job ids).  A run
# in flight at that moment is ended by pg_cron itself as failed with
# "job canceled": such runs are the test's doing and are left out below.
for my $n (@nodes)
{
	my (undef, $node) = @$n;
	my %ids = map { split /\|/ } split /\n/,
	  $node->safe_psql('postgres', 'SELECT jobname, jobid FROM cron.job');
	push @$n, \%ids;
	$node->safe_psql('postgres',
		'SELECT cron.unschedule(jobid) FROM cron.job');
}

# then wait (bounded) until every run has ended, those in flight at the
# unscheduling included: what follows reads their statuses, and the
# exporter's progress query must see no checkpoint running
my $settle_until = time() + 60;
my $unended;
while (1)
{
	$unended = join '', map {
		my $mode = $_->[0];
		$_->[1]->safe_psql('postgres', qq{
			SELECT string_agg(format('$mode: run %s of job %s (process %s): %s %s',
			         d.runid, d.jobid,
			         d.job_pid, d.status, d.return_message), E'\\n')
			  FROM cron.job_run_details d WHERE NOT (} . ENDED . ')')
	} @nodes;
	last if $unended eq '' || time() >= $settle_until;
	sleep(0.2);
}
is($unended, '', 'every run of the unscheduled jobs has ended');

my $succeeded_all = 0;
for my $n (@nodes)
{
	my ($mode, $node, $preloaded, $ids) = @$n;
	my $runs = sub {
		my ($job, $cols) = @_;
		return map { [ split /\|/, $_, -1 ] } split /\n/,
		  $node->safe_psql('postgres', qq{
			SELECT $cols FROM cron.job_run_details d
			 WHERE d.jobid = $ids->{$job}
			   AND } . ENDED . q{
			   AND d.return_message IS DISTINCT FROM 'job canceled'
			 ORDER BY d.runid});
	};

	# (a) checkpoint_all succeeded
	my @all = $runs->('lsm-all', 'd.status, ' . MSG);
	ok(scalar(@all) >= 1, "$mode: lsm-all ran");
	ok((grep { $_->[0] eq 'succeeded' } @all),
		"$mode: a run of SELECT lancelsm_checkpoint_all() succeeded");
	is_deeply([ map { "$_->[0] $_->[1]" } grep { $_->[0] ne 'succeeded' } @all ],
		[], "$mode: no run of lancelsm_checkpoint_all() failed");
	$succeeded_all += grep { $_->[0] eq 'succeeded' } @all;
	note("$mode: lsm-all return_message: $all[0][1]") if @all;

	# a table whose checkpoint fails is a row (ok false) of
	# lancelsm_checkpoint_all(), not a failed run; the DO block of
	# lsm-strict turns it into one
	my @strict = $runs->('lsm-strict', 'd.status, ' . MSG);
	note("$mode: lsm-strict return_message: $strict[0][1]") if @strict;
	ok(@strict && $strict[0][0] eq 'failed'
		  && $strict[0][1] =~ m{lancelsm checkpoints failed: emu/leaky: 55000 }
		  && $strict[0][1] !~ m{emu/steady},
		"$mode: the strict job fails naming the failed table only")
	  or diag(explain(\@strict));
	if ($preloaded)
	{
		is($node->safe_psql('postgres', q{
			SELECT ok FROM lancelsm_checkpoint_history
			 WHERE server = 'emu' AND table_name = 'steady'}),
			't', "$mode: the history shows the checkpoint of steady ok");
		# its server never answered for events: not a table the history
		# records (docs/operations.md, "Progress and history")
		is($node->safe_psql('postgres', q{
			SELECT count(*) FROM lancelsm_checkpoint_history
			 WHERE server = 'emu' AND table_name = 'events'}),
			'0', "$mode: the history has no entry for the never-answered table");
	}

	# (b) the hanging job failed with the timeout, at the timeout.  How
	# long it ran is measured from its start_time to the time the server
	# logged the job process's timeout error: pg_cron 1.4's end_time is
	# not reliable in background-worker mode (it is taken when the
	# scheduler starts reading the worker's messages, e.g. at the SET's
	# completion, not when the error arrives; fixed in pg_cron 1.5).
	my @hang = $runs->('lsm-hang',
		'd.status, ' . MSG . ', extract(epoch FROM d.end_time - d.start_time), '
		  . 'extract(epoch FROM d.start_time), d.job_pid, d.start_time');
	my $log = slurp_file($node->logfile);
	for my $i (0 .. 1)
	{
		my ($status, $msg, $recorded, undef, $job_pid, $start) =
		  @{ $hang[$i] // [ '', '', 0, 0, 0, 'now' ] };
		my ($logged) = $log =~
		  /^(\S+ \S+ \S+) [^\n]*\[$job_pid\] [^\n]*ERROR:  \Q$TIMEOUT_MSG\E$/m;
		my $secs = defined $logged
		  ? $node->safe_psql('postgres',
			"SELECT extract(epoch FROM '$logged'::timestamptz - '$start'::timestamptz)")
		  : 0;
		ok(defined $logged, "$mode: run $i: the timeout error of process $job_pid is logged");
		note(sprintf('%s: run %d: end_time - start_time in cron.job_run_details: %.3f s',
			$mode, $i, $recorded));
		is($status, 'failed', "$mode: hanging job run $i failed");
		like($msg, qr/\Q$TIMEOUT_MSG\E/,
			"$mode: run $i says '$TIMEOUT_MSG'");
		note("$mode: hanging job run $i return_message: $msg");
		my $over = $secs - $TIMEOUT_S;
		diag(sprintf('%s: hanging job run %d took %.3f s, overshoot %.0f ms',
			$mode, $i, $secs, 1000 * $over));
		cmp_ok($secs, '>=', $TIMEOUT_S - 0.05,
			"$mode: run $i did not end before the timeout");
		cmp_ok($over, '<', $BOUND_S,
			"$mode: run $i ended within ${BOUND_S}s of the timeout");
	}

	# (c) the run after a failed one starts on time
	if (@hang >= 2)
	{
		my ($t0, $t1) = ($hang[0][3], $hang[1][3]);
		my $gap = $t1 - $t0;
		diag(sprintf('%s: consecutive runs started %.3f s apart', $mode, $gap));
		cmp_ok(abs($gap - $period), '<', $ON_TIME_S,
			"$mode: the run after a failed one starts one period later");
		unless ($seconds)
		{
			for my $t ($t0, $t1)
			{
				my $late = $t - 60 * int($t / 60);
				cmp_ok($late, '<', $ON_TIME_S,
					sprintf('%s: a run started %.3f s after its minute', $mode, $late));
			}
		}
	}
	else
	{
		fail("$mode: two runs of the hanging job to compare");
	}

	# (d) the API key is nowhere in pg_cron's tables
	my @leaky = $runs->('lsm-leaky', 'd.status, ' . MSG);
	ok(@leaky && $leaky[0][0] eq 'failed' && $leaky[0][1] =~ /\*\*\*/,
		"$mode: the echoing server's error reached pg_cron redacted")
	  or diag(explain(\@leaky));
	note("$mode: lsm-leaky return_message: $leaky[0][1]") if @leaky;
	ok(@strict && $strict[0][1] =~ /\*\*\*/,
		"$mode: the strict job's error is redacted too");
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM cron.job_run_details
		 WHERE strpos(coalesce(command, '') || coalesce(return_message, ''),
		              '$API_KEY') > 0}),
		'0', "$mode: the API key is not in cron.job_run_details");
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM cron.job
		 WHERE strpos(command, '$API_KEY') > 0}),
		'0', "$mode: the API key is not in cron.job");
	my @cron_log = grep { /cron job/ } split /\n/,
	  slurp_file($node->logfile);
	is_deeply([ grep { /\Q$API_KEY\E/ } @cron_log ],
		[], "$mode: the API key is not in pg_cron's log lines");
}

# the emulator saw checkpoint_all's calls on "steady": a flush per
# successful run, stats reads and compaction of its two generations
my $steady = emu('GET', '/_emulator/counts?table=steady');
note(explain($steady));
cmp_ok($steady->{flush_lsm}, '>=', $succeeded_all,
	'the emulator saw a flush of steady per successful run');
cmp_ok($steady->{get_lsm_stats}, '>=', $succeeded_all,
	'the emulator saw stats reads of steady');
cmp_ok($steady->{compact_lsm}, '>=', 1,
	'the emulator saw compaction of steady');
cmp_ok(emu_counts()->{flush_lsm}, '>=', 4,
	'the hanging flushes of events reached the emulator');

# (e) the queries of contrib/postgres_exporter/lancelsm.yaml run and
# report what happened (read with a minimal parser of that file's layout:
# a top-level "name:", then "  query: |" and its lines indented by 4)
my $yaml_file = "$FindBin::RealBin/../contrib/postgres_exporter/lancelsm.yaml";
my (%query, $cur, $in_query);
for (split /\n/, slurp_file($yaml_file))
{
	if (/^(\w+):\s*$/) { ($cur, $in_query) = ($1, 0); }
	elsif (/^  query: \|\s*$/) { ($query{$cur}, $in_query) = ('', 1); }
	elsif ($in_query && /^    (.*)$/) { $query{$cur} .= "$1\n"; }
	else { $in_query = 0; }
}
is_deeply(
	[ sort keys %query ],
	[
		qw(lancelsm_checkpoint_error lancelsm_checkpoint_last lancelsm_info
		  lancelsm_progress lancelsm_status lancelsm_table)
	],
	'the exporter file has its six queries');
for my $n (@nodes)
{
	my ($mode, $node, $preloaded) = @$n;
	for my $name (sort keys %query)
	{
		# lancelsm_info and lancelsm_status need no shared memory
		next if $name !~ /^lancelsm_(info|status)$/ && !$preloaded;
		my ($rc, $out, $err) = $node->psql('postgres', $query{$name});
		ok($rc == 0 && $err eq '', "$mode: exporter query $name runs")
		  or diag($err);
	}
	is($node->safe_psql('postgres', "SELECT string_agg(table_name, ' ' ORDER BY table_name)
		FROM ($query{lancelsm_status}) q"),
		"leaky steady", "$mode: exporter: a status row per declared table");
	next unless $preloaded;
	$node->safe_psql('postgres', 'SELECT count(*) FROM lancelsm_table_stats');
	is($node->safe_psql('postgres', "SELECT foreign_server, table_name, error, buckets
		FROM ($query{lancelsm_table}) q ORDER BY table_name"),
		"emu|leaky|1|\nemu|steady|0|2",
		"$mode: exporter: steady's stats; leaky's error, without an error label");
	is($node->safe_psql('postgres', "SELECT table_name, running
		FROM ($query{lancelsm_progress}) q ORDER BY 1"),
		"leaky|0\nsteady|0", "$mode: exporter: no checkpoint running");
	is($node->safe_psql('postgres', "SELECT table_name, ok, passes >= 0
		FROM ($query{lancelsm_checkpoint_last}) q ORDER BY 1"),
		"steady|1|t",
		"$mode: exporter: the last checkpoint of each table");
	is($node->safe_psql('postgres', "SELECT count(*)
		FROM ($query{lancelsm_checkpoint_error}) q"),
		"0", "$mode: exporter: no failed last checkpoint, no error series");
	is($node->safe_psql('postgres', "SELECT history_entries >= 1, max_herd_entries
		FROM ($query{lancelsm_info}) q"),
		"t|256", "$mode: exporter: lancelsm_info's entries");
}

# let the hung requests go, then stop the nodes (the emulator stops in
# LsmTap's END)
emu('DELETE', '/_emulator/faults');
$_->[1]->stop for @nodes;

# no server process of either node ended by a signal (a crash restarts the
# node's backends, which the checks above may survive): the postmaster's
# report names the signal and the statement
for my $n (@nodes)
{
	my ($mode, $node) = @$n;
	my @crashes = slurp_file($node->logfile) =~
	  /^.*terminated by signal.*\n(?:.*DETAIL:.*\n)?/mg;
	is(join('', @crashes), '', "$mode: no server process ended by a signal");
}

done_testing();
