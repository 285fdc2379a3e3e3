#!/bin/sh
# One phase of a tsrepro sweep as a Slurm job array, written by `tsrepro sweep --executor slurm`
# (sbatch gets the array range, the log files and the user's flags on its command line): array
# task i runs the job directory on line i+1 of the list, as every executor runs a job.
dir=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" __LIST__)
exec __TSREPRO__ sweep-job "$dir"
