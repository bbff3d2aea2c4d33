/* origin_lib.c - the library origin_user finds through $ORIGIN/../lib;
 * it needs origin_dep, beside it. */
int origin_dep_value(void);
int origin_value(void);

int origin_value(void)
{
    return origin_dep_value() + 7;
}
