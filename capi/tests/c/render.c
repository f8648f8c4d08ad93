/*
 * The C API from C: renders a preset from a raw RGBA8 frame through padded strides, sets and
 * reads a parameter, and checks that bad input (a missing preset, unknown parameters, NULL
 * pointers, bad sizes, a tiny memory budget) gives error objects with messages. Built and run
 * by capi/tests/c_api.rs, which compares the images it writes with the Rust API's.
 *
 * usage: render PRESET INPUT.rgba WIDTH HEIGHT OUT_W OUT_H DEFAULT.rgba PARAM.rgba MISSING
 *   DEFAULT.rgba: frame 0 with the preset's parameters; PARAM.rgba: frame 1 after
 *   HARD_SCAN = -4; MISSING: a preset path that does not exist.
 */
#include <softgpu.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks = 0;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        checks++;                                                            \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, \
                    #cond);                                                  \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

/* Fails the program with the error's message when `error` is not NULL. */
static void expect_ok(softgpu_error_t error, const char *what) {
    if (error != NULL) {
        fprintf(stderr, "%s failed: ", what);
        softgpu_error_print(error);
        softgpu_error_free(&error);
        exit(1);
    }
    checks++;
}

/* Checks that `error` has kind `errno_expected` and a message containing `needle`, then
 * frees it. */
static void expect_error(softgpu_error_t error, SOFTGPU_ERRNO errno_expected,
                         const char *needle, const char *what) {
    CHECK(error != NULL, "%s succeeded, expected an error", what);
    SOFTGPU_ERRNO code = softgpu_error_errno(error);
    char *message = NULL;
    CHECK(softgpu_error_write(error, &message) == 0 && message != NULL,
          "%s: the message could not be written", what);
    CHECK(code == errno_expected, "%s: errno %d, expected %d (%s)", what,
          (int)code, (int)errno_expected, message);
    CHECK(strstr(message, needle) != NULL, "%s: message `%s` lacks `%s`", what,
          message, needle);
    printf("%s: error %d: %s\n", what, (int)code, message);
    CHECK(softgpu_error_free_string(&message) == 0 && message == NULL,
          "%s: the message was not freed", what);
    CHECK(softgpu_error_free(&error) == 0 && error == NULL,
          "%s: the error was not freed", what);
    CHECK(softgpu_error_free(&error) == 1, "%s: a freed error freed again", what);
}

static unsigned char *read_file(const char *path, size_t size) {
    FILE *file = fopen(path, "rb");
    CHECK(file != NULL, "cannot open %s", path);
    unsigned char *data = malloc(size);
    CHECK(data != NULL, "out of memory");
    CHECK(fread(data, 1, size, file) == size, "%s is shorter than %zu bytes", path,
          size);
    fclose(file);
    return data;
}

/* Writes the `width * 4` pixel bytes of each row of a strided image. */
static void write_rows(const char *path, const softgpu_image_mut_t *image) {
    FILE *file = fopen(path, "wb");
    CHECK(file != NULL, "cannot create %s", path);
    for (uint32_t y = 0; y < image->height; y++) {
        size_t row = (size_t)image->width * 4;
        CHECK(fwrite(image->data + y * image->stride, 1, row, file) == row,
              "cannot write %s", path);
    }
    CHECK(fclose(file) == 0, "cannot write %s", path);
}

/* The bytes between the pixels of a row and the next row still hold `fill`. */
static int padding_intact(const softgpu_image_mut_t *image, unsigned char fill) {
    for (uint32_t y = 0; y < image->height; y++) {
        for (size_t x = (size_t)image->width * 4; x < image->stride; x++) {
            if (image->data[y * image->stride + x] != fill) return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 11) {
        fprintf(stderr,
                "usage: %s PRESET INPUT.rgba WIDTH HEIGHT OUT_W OUT_H DEFAULT.rgba "
                "PARAM.rgba MISSING LLVMPIPE.rgba\n",
                argv[0]);
        return 2;
    }
    const char *preset = argv[1];
    uint32_t width = (uint32_t)strtoul(argv[3], NULL, 10);
    uint32_t height = (uint32_t)strtoul(argv[4], NULL, 10);
    uint32_t out_width = (uint32_t)strtoul(argv[5], NULL, 10);
    uint32_t out_height = (uint32_t)strtoul(argv[6], NULL, 10);
    CHECK(softgpu_api_version() == SOFTGPU_API_VERSION, "library API version %zu",
          softgpu_api_version());

    /* The input with 12 bytes of padding after each row. */
    unsigned char *tight = read_file(argv[2], (size_t)width * height * 4);
    size_t in_stride = (size_t)width * 4 + 12;
    unsigned char *padded = calloc(in_stride, height);
    CHECK(padded != NULL, "out of memory");
    for (uint32_t y = 0; y < height; y++) {
        memcpy(padded + y * in_stride, tight + (size_t)y * width * 4, (size_t)width * 4);
    }
    free(tight);
    softgpu_image_t input = {padded, width, height, in_stride};

    /* The output with 8 bytes of padding, which must stay untouched. */
    size_t out_stride = (size_t)out_width * 4 + 8;
    unsigned char *pixels = malloc(out_stride * out_height);
    CHECK(pixels != NULL, "out of memory");
    memset(pixels, 0xAB, out_stride * out_height);
    softgpu_image_mut_t output = {pixels, out_width, out_height, out_stride};

    softgpu_filter_chain_opt_t options = softgpu_filter_chain_opt_default();
    options.executor = SOFTGPU_EXECUTOR_JIT;
    softgpu_filter_chain_t chain = NULL;
    expect_ok(softgpu_filter_chain_create(preset, &options, &chain), "create");
    CHECK(chain != NULL, "create gave no chain");

    /* Frame 0 with the default frame options. */
    expect_ok(softgpu_filter_chain_frame(&chain, 0, input, output, NULL), "frame 0");
    CHECK(padding_intact(&output, 0xAB), "frame 0 wrote into the row padding");
    write_rows(argv[7], &output);

    /* Parameters: their names, the shader's default, then a new value for the next frame. */
    size_t count = 0;
    expect_ok(softgpu_filter_chain_get_param_count(&chain, &count), "get the parameter count");
    CHECK(count == 7, "the preset has %zu parameters, expected 7", count);
    const char *name = NULL;
    expect_ok(softgpu_filter_chain_get_param_name(&chain, 2, &name), "get parameter 2's name");
    CHECK(name != NULL && strcmp(name, "HARD_SCAN") == 0, "parameter 2 is %s", name);
    expect_error(softgpu_filter_chain_get_param_name(&chain, count, &name),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "7 parameters", "get a name past the end");
    float value = 0.0f;
    expect_ok(softgpu_filter_chain_get_param(&chain, "HARD_SCAN", &value), "get HARD_SCAN");
    CHECK(value == -8.0f, "HARD_SCAN is %f, expected the shader's default -8", value);
    expect_ok(softgpu_filter_chain_set_param(&chain, "HARD_SCAN", -4.0f), "set HARD_SCAN");
    expect_ok(softgpu_filter_chain_get_param(&chain, "HARD_SCAN", &value), "get HARD_SCAN");
    CHECK(value == -4.0f, "HARD_SCAN is %f after setting -4", value);
    softgpu_frame_opt_t frame_options = softgpu_frame_opt_default();
    CHECK(frame_options.frame_direction == 1 && frame_options.total_subframes == 1,
          "frame option defaults");
    expect_ok(softgpu_filter_chain_frame(&chain, 1, input, output, &frame_options),
              "frame 1");
    write_rows(argv[8], &output);

    /* The same preset under llvmpipe's rules; the default options take its math and sRGB curve. */
    softgpu_filter_chain_opt_t driver_options = softgpu_filter_chain_opt_default();
    CHECK(driver_options.math == SOFTGPU_MATH_DRIVER, "math defaults to the driver's");
    softgpu_filter_chain_t lavapipe_like = NULL;
    expect_ok(softgpu_filter_chain_create_for_driver(preset, &driver_options,
                                                     SOFTGPU_DRIVER_LLVMPIPE, &lavapipe_like),
              "create for llvmpipe");
    expect_ok(softgpu_filter_chain_frame(&lavapipe_like, 0, input, output, NULL),
              "llvmpipe frame 0");
    write_rows(argv[10], &output);
    softgpu_filter_chain_free(&lavapipe_like);

    /* Errors. */
    softgpu_filter_chain_t missing = NULL;
    expect_error(softgpu_filter_chain_create(argv[9], NULL, &missing),
                 SOFTGPU_ERRNO_LOAD_ERROR, "missing.slangp", "create from a missing preset");
    CHECK(missing == NULL, "a failed create wrote a chain");
    expect_error(softgpu_filter_chain_create(NULL, NULL, &missing),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "preset_path", "create with a NULL path");
    expect_error(softgpu_filter_chain_create(preset, NULL, NULL),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "out", "create with a NULL out");
    softgpu_filter_chain_opt_t bad_options = softgpu_filter_chain_opt_default();
    bad_options.executor = 7;
    expect_error(softgpu_filter_chain_create(preset, &bad_options, &missing),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "executor", "create with executor 7");
    expect_error(softgpu_filter_chain_create_for_driver(preset, NULL, 3, &missing),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "driver", "create for driver 3");
    bad_options = softgpu_filter_chain_opt_default();
    bad_options.math = 9;
    expect_error(softgpu_filter_chain_create(preset, &bad_options, &missing),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "SOFTGPU_MATH_DRIVER", "create with math 9");
    bad_options = softgpu_filter_chain_opt_default();
    bad_options.version = 0;
    expect_error(softgpu_filter_chain_create(preset, &bad_options, &missing),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "version", "create with version 0");

    expect_error(softgpu_filter_chain_set_param(&chain, "NOPE", 1.0f),
                 SOFTGPU_ERRNO_SHADER_PARAMETER_ERROR, "NOPE", "set an unknown parameter");
    expect_error(softgpu_filter_chain_get_param(&chain, "NOPE", &value),
                 SOFTGPU_ERRNO_SHADER_PARAMETER_ERROR, "HARD_SCAN",
                 "get an unknown parameter");
    expect_error(softgpu_filter_chain_get_param(&chain, "HARD_SCAN", NULL),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "out", "get into NULL");
    expect_error(softgpu_filter_chain_set_param(&chain, NULL, 1.0f),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "name", "set a NULL name");
    expect_error(softgpu_filter_chain_set_param(NULL, "HARD_SCAN", 1.0f),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "chain", "set on a NULL chain");

    softgpu_image_t no_data = {NULL, width, height, in_stride};
    expect_error(softgpu_filter_chain_frame(&chain, 2, no_data, output, NULL),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "input.data", "frame from NULL data");
    softgpu_image_t short_stride = {padded, width, height, (size_t)width * 4 - 1};
    expect_error(softgpu_filter_chain_frame(&chain, 2, short_stride, output, NULL),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "stride", "frame with a short stride");
    softgpu_image_mut_t empty_output = {pixels, 0, out_height, out_stride};
    expect_error(softgpu_filter_chain_frame(&chain, 2, input, empty_output, NULL),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "output size", "frame into width 0");
    frame_options.rotation = 4;
    expect_error(softgpu_filter_chain_frame(&chain, 2, input, output, &frame_options),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "rotation", "frame with rotation 4");
    expect_error(softgpu_filter_chain_frame(NULL, 2, input, output, NULL),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "chain", "frame on a NULL chain");

    /* A budget too small for a frame is refused before the frame allocates. */
    softgpu_filter_chain_opt_t tiny = softgpu_filter_chain_opt_default();
    tiny.memory_budget = 4096;
    softgpu_filter_chain_t small = NULL;
    expect_ok(softgpu_filter_chain_create(preset, &tiny, &small), "create with 4 KiB");
    expect_error(softgpu_filter_chain_frame(&small, 0, input, output, NULL),
                 SOFTGPU_ERRNO_RUNTIME_ERROR, "budget", "frame over the memory budget");
    expect_ok(softgpu_filter_chain_free(&small), "free the small chain");

    /* Freeing sets the handle to NULL; freeing NULL again does nothing. */
    expect_ok(softgpu_filter_chain_free(&chain), "free");
    CHECK(chain == NULL, "free left the handle set");
    expect_ok(softgpu_filter_chain_free(&chain), "free a NULL handle");
    expect_error(softgpu_filter_chain_frame(&chain, 3, input, output, NULL),
                 SOFTGPU_ERRNO_INVALID_PARAMETER, "*chain is NULL", "frame on a freed chain");
    CHECK(softgpu_error_errno(NULL) == SOFTGPU_ERRNO_UNKNOWN, "errno of NULL");
    CHECK(softgpu_error_print(NULL) == 1, "print of NULL");

    free(padded);
    free(pixels);
    printf("softgpu C API: %d checks passed\n", checks);
    return 0;
}
