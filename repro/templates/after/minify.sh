#!/bin/sh
# Minifies this case (written by tsrepro's TSREPRO_AFTER workflow).
exec __COMMAND__ "$@"
