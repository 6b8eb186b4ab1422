#!/usr/bin/perl
# collapse.pl - fold `perf script` text into "stack count" lines, with the
# same rules as collapse.py (those of stackcollapse-perf.pl's defaults):
# first event type only, offsets stripped, inline frames kept, "[unknown]"
# replaced by "[module basename]", ";" -> ":", text from "(" dropped,
# quotes removed, spaces in the command name -> "_".  Used by make bench as
# the "<collapse>" of "perf script | <collapse>": perl, as users run it.
use strict;
use warnings;

my (%count, @stack, $pname, $skip, $filter);

sub flush {
	if (defined $pname && !$skip && @stack) {
		$count{join(';', $pname, @stack)}++;
	}
	@stack = ();
	undef $pname;
	$skip = 0;
}

while (my $line = <>) {
	chomp $line;
	next if $line =~ /^#/;
	if ($line eq '') {
		flush();
		next;
	}
	if (!defined $pname && $line =~ /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/) {
		$pname = $1;
		if ($line =~ /:\s*(\d+)*\s+(\S+):\s*$/) {
			if (!defined $filter) {
				$filter = $2;
			} elsif ($2 ne $filter) {
				$skip = 1;
			}
		}
		$pname =~ tr/ /_/;
		next;
	}
	next unless defined $pname;
	if ($line =~ /^\s*(\w+)\s*(.+) \((\S*)\)/) {
		my ($raw, $mod) = ($2, $3);
		$raw =~ s/\+0x[\da-f]+$//;
		next if $raw =~ /^\(/;
		my @inline;
		for my $f (split /->/, $raw) {
			if ($f eq '[unknown]') {
				if ($mod ne '[unknown]') {
					($f = $mod) =~ s/.*\///;
				} else {
					$f = 'unknown';
				}
				$f = "[$f]";
			}
			$f =~ s/;/:/g;
			$f =~ s/\((?!anonymous namespace\)).*// unless $f =~ /\.\(.*\)\./;
			$f =~ tr/"'//d;
			push @inline, $f;
		}
		unshift @stack, @inline;
	}
}
flush();
print "$_ $count{$_}\n" for sort keys %count;
