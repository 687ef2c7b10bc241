// @ts-check
/* The report document: the JSON that report/html_page.py embeds in the page, as report/data.py's
 * report_document writes it (schema 2). Types only: no viewer module imports this file at run
 * time, so the page does not carry it; tests/report/test_report_viewer.py checks that every field the
 * document has is described here, and tsc checks every read against these descriptions.
 *
 * Labels (a step's operator, a buffer's short label and shape, a plan's parts and optimize
 * command) are made in Python (report/labels.py) and shown as they come: the viewer formats only
 * numbers it computes itself (a typed budget, a difference, an axis tick).
 */

/**
 * @typedef {object} ReportDocument
 * @property {number} schema_version
 * @property {string} tool  the program that wrote the page ("arenalens")
 * @property {Report[]} reports  one, or two to compare
 */

/**
 * One model under one runtime.
 * @typedef {object} Report
 * @property {string} model  display name
 * @property {string} source
 * @property {string} description
 * @property {string} runtime  "tflm" | "litert"
 * @property {number} tensor_count
 * @property {number} operator_count
 * @property {Build | null} build  the build the figures are for (null: a runtime without builds)
 * @property {number} required_bytes  the number to declare with every arena's first plan
 * @property {Record<string, number>} required_parts
 * @property {Section[]} arena_sections  where every byte of required_bytes goes, in address
 *   order (TFLM: head, setup, tail; LiteRT: one per arena); [] when not computed
 * @property {number} other_bytes  bytes the runtime needs besides the primary arena
 * @property {number | null} budget  --budget / --target, in bytes
 * @property {Declare | null} declare
 * @property {Verdict | null} verdict
 * @property {string[]} next_steps  what to do, in order
 * @property {Finding[]} findings  diagnose, most severe first
 * @property {string} model_argument  the model as typed, for the commands shown
 * @property {string | null} max_input_name  --max-input: the resized input
 * @property {number[] | null} max_input_shape  --max-input: the largest shape that fits
 * @property {InputSize[]} input_sizes  --max-input: every size planned
 * @property {Arena[]} arenas  arenas[0] is the primary arena
 * @property {InterpreterHeap[]} [interpreter_heap]  LiteRT: the interpreter's heap under each
 *   delegate, the one the figure is for first (absent for TFLM)
 */

/**
 * LiteRT's interpreter heap under one delegate (runtimes/litert/heap.py's heap_document).
 * @typedef {object} InterpreterHeap
 * @property {string} delegate  "xnnpack" | "none"
 * @property {number} threads  Interpreter(num_threads=...) the figures are for
 * @property {string} isa  the instruction set the figures are for (--isa)
 * @property {number} after_setup_bytes
 * @property {number} after_first_invoke_bytes
 * @property {number} peak_bytes
 * @property {boolean} exact  every part but the allowances exact
 * @property {string} machine  the wheel and machine the figures were measured on
 * @property {string | null} estimate  how far off it may be, and which way
 * @property {HeapPart[]} parts
 * @property {string[]} notes
 * @property {HeapWay[]} [ways]  each way a model input picks (an IF's branch, a WHILE's body
 *   run or not, whether a FULLY_CONNECTED unpacking an int4 filter reads zeros) with its own
 *   figures; those above count the larger of each
 */

/**
 * @typedef {object} HeapWay
 * @property {WayChoice[]} choices
 * @property {number} after_setup_bytes
 * @property {number} after_first_invoke_bytes
 * @property {number} peak_bytes
 * @property {boolean} exact  replayed with no other way counted
 * @property {boolean} zero_inputs  the way all-zero inputs take
 */

/**
 * @typedef {object} WayChoice
 * @property {string} opcode  "IF" | "WHILE" | "FULLY_CONNECTED"
 * @property {number} operator  its operator index in the primary subgraph
 * @property {string} taken  "then" | "else" (IF), "runs" | "never runs" (WHILE),
 *   "an input that is not all zeros" | "all zeros" (FULLY_CONNECTED)
 */

/**
 * @typedef {object} HeapPart
 * @property {string} name
 * @property {number} bytes
 * @property {string} phase  "setup" | "first_invoke" | "transient"
 * @property {boolean} exact
 * @property {string} meaning
 */

/**
 * A TFLM build: the CPU, kernels and allocator the figures are for (builds/build.py's
 * build_summary).
 * @typedef {object} Build
 * @property {string} name  "host", "cortex-m7/cmsis-nn" or "esp32s3/esp-nn@1.2.0"
 * @property {string} title  what the build is, in words
 * @property {string | null} cpu  null: the host
 * @property {string} kernels  "reference", "cmsis-nn" or "esp-nn"
 * @property {string} isa  the kernel library's code path: "none", "dsp", "mve" (CMSIS-NN),
 *   "esp32s3", "esp32p4", "esp-generic", "esp-ansi" (ESP-NN)
 * @property {string} abi  "LP64 (x86-64)", "ILP32 (Arm EABI)" or
 *   "ILP32 (Xtensa/RISC-V, int-sized enums)"
 * @property {string} allocator  "RecordingMicroAllocator" or "MicroAllocator"
 * @property {boolean} compression  built with compressed-tensor support
 * @property {string | null} kernels_release  the kernel library's own release (CMSIS-NN commit,
 *   esp-nn version)
 * @property {"user" | "board" | null} kernels_named_by  who named the kernels (null: default)
 * @property {number | null} resource_variables  the MicroResourceVariables table size given (null: the model's count)
 * @property {TflmRelease} tflm  the tflite-micro sources built
 */

/**
 * One TFLM release (builds/tflm.py's TflmRelease, as build_summary gives it).
 * @typedef {object} TflmRelease
 * @property {string} release  its name: the abbreviated commit (a date when none is known)
 * @property {string | null} commit
 * @property {string} date  ISO date of the sources
 * @property {string | null} wheel  the tflite-micro version built from it, when one names it
 * @property {string} title
 */

/**
 * The number to declare, its parts and how sure it is (declared.py's as_dict, with labels).
 * @typedef {object} Declare
 * @property {string} symbol  "kTensorArenaSize", or "LiteRT arenas"
 * @property {number} required_bytes
 * @property {DeclarePart[]} parts
 * @property {string} planner
 * @property {boolean} runtime_plan
 * @property {string} device  the build the figure is for
 * @property {DeclareStatus} status
 * @property {string[]} reasons  why an estimate, or why it cannot run (one per distinct reason)
 * @property {object[]} refusals  why it cannot run: one per distinct reason (reason, phase,
 *   opcode, operators as [subgraph, operator] pairs, count, fix)
 * @property {object[]} conflicts  why the model's offline plan would corrupt tensors at these
 *   shapes or on this build (kind, reason, fix)
 * @property {string} qualifier  shown after the number in parentheses ("" when exact)
 * @property {string} reason_prefix  each reason's prefix ("estimate", "cannot run" ...)
 * @property {string} parts_text  "head 3.75 KiB + tail 23.73 KiB, both inside the tensor arena"
 * @property {boolean} [process_memory]  LiteRT's memory on a device (model file + the
 *   interpreter's peak heap): the figure no plan switch changes
 */

/** @typedef {"exact" | "estimate" | "cannot-run" | "cannot-run-correctly" | "placeholder-shape"} DeclareStatus */

/**
 * @typedef {object} DeclarePart
 * @property {string} name
 * @property {number} bytes
 * @property {string} meaning
 */

/**
 * The command's verdict (verdict.py): does it run, correctly, at a known input size, does the
 * number fit the board or budget asked about, and what to do next.
 * @typedef {object} Verdict
 * @property {string | null} verdict  "FITS", "CANNOT RUN" ...; null without a budget
 * @property {string} where  "ST NUCLEO-F746ZG (Cortex-M7 216 MHz)" or "320KB = 327,680 B"
 * @property {number | null} budget_bytes
 * @property {number | null} reserve_bytes
 * @property {number | null} available_bytes
 * @property {boolean} fits
 * @property {boolean | null} fits_after_optimize
 * @property {number | null} optimized_bytes
 * @property {string | null} optimized_missing_extra_text  how the exact search OR-Tools' extra adds could lower optimized_bytes or let a rewrite fit (null: none was missing)
 * @property {number | null} best_case_bytes
 * @property {string | null} target
 * @property {string} source
 * @property {boolean} runs
 * @property {boolean} plan_holds
 * @property {boolean} shape_known
 * @property {number | null} required_bytes  null when there is no number (cannot run ...)
 * @property {number | null} headroom_bytes
 * @property {string} [npu_short]  present when the arena fits and what the NPU needs beside it
 *   does not: why
 * @property {Placement} [placement]  present on a board with several RAM banks: where each part
 *   goes (placement.py)
 * @property {object[]} cannot_run  the declare's refusals again
 * @property {object[]} plan_conflicts  the declare's conflicts again
 * @property {object[]} steps  what to do next (text, command, saves_bytes): each command runs
 *   as printed
 */

/**
 * Where each part of TFLM's memory goes on a board with several RAM banks (placement.py): the
 * fastest placement that fits, or the most the board could hold.
 * @typedef {object} Placement
 * @property {boolean} fits
 * @property {string | null} kind  "one arena" | "two buffers"; null when nothing fits
 * @property {boolean | null} variables_apart  the resource variables' table on its own allocator
 * @property {PlacedBuffer[]} banks  one per buffer, empty when nothing fits
 * @property {string[]} notes  the speed cost, DMA, what the code must do
 * @property {number} largest_one_bytes  the largest block: the largest single arena
 * @property {string} largest_one_bank
 * @property {number} largest_two_bytes  the two largest disjoint blocks together
 * @property {string[] | null} largest_two_banks
 * @property {number} most_bytes
 * @property {number} short_bytes  the fewest bytes the buffers must lose for a placement to fit
 */

/**
 * One buffer of a placement: its part, bytes and bank (names come from targets.json).
 * @typedef {object} PlacedBuffer
 * @property {string} part  "arena" | "persistent" | "non-persistent" | "resource variables"
 * @property {number} bytes
 * @property {string} bank  a bank, or banks that follow each other joined with "+"
 * @property {string} kind  "tightly-coupled" | "on-chip" | "external"
 * @property {number} available_bytes
 * @property {number} spare_bytes
 * @property {string | null} section  the linker section that puts a static buffer there
 * @property {string | null} allocate  the call that reaches it (heap_caps_malloc ...)
 */

/**
 * @typedef {object} Finding
 * @property {string} rule
 * @property {string} severity  "error" | "warning" | "info"
 * @property {string} where
 * @property {string} message
 * @property {string} fix
 * @property {number | null} saving_bytes
 */

/**
 * @typedef {object} InputSize
 * @property {number[]} shape
 * @property {number} height
 * @property {number | null} required_bytes  null: the runtime refused this size
 * @property {boolean} fits
 */

/**
 * One arena: columns of buffers and steps, and one plan per planner.
 * @typedef {object} Arena
 * @property {string} name
 * @property {number} other_bytes  bytes the runtime needs besides this arena with its first plan
 * @property {number} lower_bound  no plan sharing no bytes can use less
 * @property {number | null} overlap_lower_bound  the bound when allowed overlaps share bytes
 * @property {OverlapColumns} overlaps
 * @property {number} no_reuse_bytes
 * @property {number | null} peak_step  the first step with the most bytes live
 * @property {string[]} notes
 * @property {BufferColumns} buffers
 * @property {StepColumns} steps
 * @property {Plan[]} plans  plans[0] is shown first
 */

/**
 * Allowed overlaps, one column per field: buffer `output` may start `min_offset_distance` bytes
 * below buffer `input`, which its operator consumes.
 * @typedef {object} OverlapColumns
 * @property {number[]} output  buffer positions
 * @property {number[]} input  buffer positions
 * @property {number[]} min_offset_distance
 * @property {number[]} operator
 * @property {string[]} opcode
 */

/**
 * Planned buffers, one column per field; a buffer is a position in every column.
 * @typedef {object} BufferColumns
 * @property {number[]} id  the planner's buffer id
 * @property {string[]} name  untrusted: only ever shown as text
 * @property {string[]} kind  "tensor" | "scratch" | "temporary" | "variable"
 * @property {number[]} subgraph
 * @property {(number | null)[]} tensor
 * @property {number[][]} shape
 * @property {string[]} dtype
 * @property {number[]} nbytes  bytes the runtime needs
 * @property {number[]} size  bytes the planner places
 * @property {number[]} first  first step live (inclusive)
 * @property {number[]} last  last step live (inclusive)
 * @property {(number | null)[]} producer  the step that writes it (null: a graph input)
 * @property {number[][]} consumers  the steps that read it
 * @property {string[][]} aliases  tensors sharing these bytes
 * @property {string[]} label  a short label that tells it apart from the arena's other buffers
 * @property {string[]} shape_label  "1x96x96x3", "scalar", or the kind of a scratch buffer
 * @property {(string | null)[]} key  what matches it across two reports where that is not its
 *   name (null): "#2" after a name's second use, "<unnamed KIND>" for no name
 */

/**
 * Steps, one column per field; a step is a row in every column.
 * @typedef {object} StepColumns
 * @property {number[]} step
 * @property {number[]} subgraph
 * @property {(number | null)[]} operator
 * @property {string[]} opcode
 * @property {number[]} live_bytes
 * @property {number[][]} reads  buffer positions
 * @property {number[][]} writes  buffer positions
 * @property {string[]} label  "op 3 CONV_2D", "subgraph 1 op 2 ADD", or what the step is
 */

/**
 * One planner's layout of an arena.
 * @typedef {object} Plan
 * @property {string} planner
 * @property {number} arena_size
 * @property {boolean} is_runtime  the runtime's own planner: what the device does
 * @property {boolean} proven_optimal
 * @property {number | null} required_bytes  computed for this plan of the primary arena
 * @property {number[]} offsets  one per buffer
 * @property {number} lower_bound  the bound this plan is judged against
 * @property {SharedRegion[]} shared_regions  allowed overlaps that share bytes in this plan
 * @property {number} declare_bytes  the number to declare with this plan
 * @property {Section[]} sections  where every byte of declare_bytes goes ([] when unknown)
 * @property {string} parts_text  what that number is made of ("" when it is the arena alone)
 * @property {string | null} optimize_command  what applies this plan (null: the runtime's own)
 * @property {string} [missing_extra_text]  how the plan went without OR-Tools' exact search (absent: it did not)
 */

/**
 * A byte range [offset, offset + bytes) of the memory to declare, and what fills it.
 * @typedef {object} Section
 * @property {string} name  "head", "setup", "tail", or a LiteRT arena's name
 * @property {number} offset
 * @property {number} bytes
 * @property {string} meaning
 * @property {SectionPart[]} parts  they add up to bytes
 */

/**
 * One kind of data in a section.
 * @typedef {object} SectionPart
 * @property {string} name
 * @property {number} bytes
 * @property {string} meaning
 * @property {string | null} category  the runtime's own name for it (TFLM: the
 *   print_allocations() category), null when the runtime does not record it
 * @property {number} count  allocations (0: a region, not counted)
 * @property {SectionItem[]} largest  its largest allocations
 */

/**
 * @typedef {object} SectionItem
 * @property {string} what
 * @property {number} bytes
 */

/**
 * [overlap position, first step, last step, low byte, high byte]
 * @typedef {[number, number, number, number, number]} SharedRegion
 */

export {};
