/*
 * drake.c - the drake binary: a command table dispatching to subcommands.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"

#ifndef DRAKE_VERSION
#define DRAKE_VERSION "unknown"
#endif

static int cmd_version(int argc, char **argv)
{
	printf("drake %s\n", DRAKE_VERSION);
	return 0;
}

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
    {"serve", serve_main, "run the scheduler extender (HTTPS) and its controllers"},
    {"progress", progress_main, "report a training replica's progress to drake (from its pod)"},
    {"sim", sim_main, "replay a trace through the scheduling policies in virtual time"},
    {"version", cmd_version, "print the version"},
};

static void usage(FILE *out)
{
	fprintf(out, "drake - gang scheduling for TFJobs, as a kube-scheduler extender\n\n"
	             "usage: drake <command> [flags]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'drake <command> --help' lists a command's flags.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(name, "--version") == 0)
		return cmd_version(argc - 1, argv + 1);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(name, commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "drake: unknown command \"%s\"\n\n", name);
	usage(stderr);
	return 2;
}
