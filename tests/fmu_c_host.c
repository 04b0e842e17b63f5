/* An importing tool written in C, as tools that are not Python host an FMU: loads the
   unit's binary, instantiates it, runs STEPS communication steps of 2 ms under a
   constant input of 4 V, prints its first output, frees it, CYCLES times; with
   "unload" it unloads the library after each cycle. Built and run by
   tests/test_fmu_hosts.py:

       fmu_c_host BINARY GUID RESOURCES_URI CYCLES STEPS [unload]            */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *component;
typedef struct {
    void (*logger)(void *, const char *, int, const char *, const char *, ...);
    void *(*allocate)(size_t, size_t);
    void (*release)(void *);
    void (*step_finished)(void *, int);
    void *environment;
} callbacks;

static void logger(void *environment, const char *name, int status, const char *category,
                   const char *message, ...)
{
    (void)environment;
    (void)category;
    printf("log %s %d: %s\n", name, status, message);
}

#define FIND(handle, name) dlsym(handle, name)

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: fmu_c_host BINARY GUID RESOURCES CYCLES STEPS [unload]\n");
        return 2;
    }
    int cycles = atoi(argv[4]), steps = atoi(argv[5]);
    int unload = argc > 6 && strcmp(argv[6], "unload") == 0;
    for (int k = 0; k < cycles; k++) {
        void *handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            fprintf(stderr, "%s\n", dlerror());
            return 3;
        }
        component (*instantiate)(const char *, int, const char *, const char *,
                                 const callbacks *, int, int) = FIND(handle, "fmi2Instantiate");
        int (*setup)(component, int, double, double, int, double) =
            FIND(handle, "fmi2SetupExperiment");
        int (*enter)(component) = FIND(handle, "fmi2EnterInitializationMode");
        int (*leave)(component) = FIND(handle, "fmi2ExitInitializationMode");
        int (*set_real)(component, const unsigned *, size_t, const double *) =
            FIND(handle, "fmi2SetReal");
        int (*get_real)(component, const unsigned *, size_t, double *) =
            FIND(handle, "fmi2GetReal");
        int (*do_step)(component, double, double, int) = FIND(handle, "fmi2DoStep");
        int (*terminate)(component) = FIND(handle, "fmi2Terminate");
        void (*free_instance)(component) = FIND(handle, "fmi2FreeInstance");
        callbacks functions = {logger, calloc, free, NULL, NULL};
        component unit = instantiate("c_host", 1, argv[2], argv[3], &functions, 0, 0);
        if (!unit) {
            fprintf(stderr, "the unit was not instantiated\n");
            return 4;
        }
        if (steps > 0) {
            unsigned input = 0, output = 1;
            double volts = 4.0, value = 0.0, t = 0.0;
            setup(unit, 0, 0.0, 0, 0, 0.0);
            enter(unit);
            leave(unit);
            for (int i = 0; i < steps; i++, t += 0.002) {
                set_real(unit, &input, 1, &volts);
                if (do_step(unit, t, 0.002, 1) != 0) {
                    fprintf(stderr, "a step failed\n");
                    return 5;
                }
            }
            get_real(unit, &output, 1, &value);
            printf("cycle %d: %.17g\n", k, value);
            terminate(unit);
        }
        free_instance(unit);
        if (unload)
            dlclose(handle);
    }
    return 0;
}
