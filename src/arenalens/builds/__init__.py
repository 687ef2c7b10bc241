"""Builds: which device a figure is for (core, ABI, kernel library and its release, TFLM release,
allocator), as one typed value every layer receives (`build.Build`), and the C ABIs (`abi.Abi`)."""
