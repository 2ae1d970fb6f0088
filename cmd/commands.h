/* commands.h - entry points of drake's subcommands; each returns an exit code. */
#ifndef DRAKE_CMD_COMMANDS_H
#define DRAKE_CMD_COMMANDS_H

int serve_main(int argc, char **argv);
int progress_main(int argc, char **argv);
int sim_main(int argc, char **argv);

#endif
