/* origin_dep.c - the library origin_lib finds beside itself, through its
 * own run path $ORIGIN (as libnio finds libnet). */
int origin_dep_value(void);

int origin_dep_value(void)
{
    return 20;
}
