/*
 * placement_cli.h - `drake sim placement`, the placement study
 * (sim/placement.h): flags, the runs, the table, the CSV and the plot.
 */
#ifndef DRAKE_SIM_PLACEMENT_CLI_H
#define DRAKE_SIM_PLACEMENT_CLI_H

/* argv[0] is "placement". Returns the exit code: 0 ok, 1 failure, 2 bad usage. */
int placement_cli_main(int argc, char **argv);

#endif
