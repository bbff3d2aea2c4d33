/* nodeps_mid.c - the library between nodeps_user and nodeps_lib. */
extern const int nodeps_table[4];
int nodeps_ready(void);
int nodeps_sum(void);

/* 10 * (3 + 5 + 7 + 9) + 1 once nodeps_lib's initializer ran: 241 */
int nodeps_sum(void)
{
    int s = 0;
    for (int i = 0; i < 4; i++)
        s += nodeps_table[i];
    return s * 10 + nodeps_ready();
}
