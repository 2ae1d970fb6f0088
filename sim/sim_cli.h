/*
 * sim_cli.h - `drake sim`: flags to config, load the trace and nodes, run
 * each policy, print the tables, write CSVs and plots.
 */
#ifndef DRAKE_SIM_SIM_CLI_H
#define DRAKE_SIM_SIM_CLI_H

/* Returns the process exit code: 0 ok, 1 failure, 2 bad usage. */
int sim_cli_main(int argc, char **argv);

#endif
