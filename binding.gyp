{
  # The serializer is a static library whose include dir is exported to
  # dependents, as llhttp's src/llhttp.gyp does, so the addon only adds a
  # dependency. Warnings are on but never fatal: users' compilers differ.
  'target_defaults': {
    'cflags': ['-Wall', '-Wextra', '-O2'],
    'cflags_c': ['-std=c11'],
    'cflags!': ['-O3', '-Os'],
    'xcode_settings': {
      'GCC_C_LANGUAGE_STANDARD': 'c11',
      'GCC_OPTIMIZATION_LEVEL': '2',
      'WARNING_CFLAGS': ['-Wall', '-Wextra']
    },
    'msvs_settings': {
      'VCCLCompilerTool': { 'Optimization': 2, 'WarningLevel': 3 }
    }
  },
  'targets': [
    {
      'target_name': 'http_message',
      'type': 'static_library',
      'sources': ['src/http_message.c', 'src/send.c', 'src/arena.c'],
      'include_dirs': ['src'],
      'direct_dependent_settings': {
        'include_dirs': ['src']
      }
    },
    {
      'target_name': 'http_oneshot',
      # Only these files include node_api.h (through src/napi.h); the
      # static library above includes no Node header.
      'sources': [
        'src/binding.c',
        'src/napi_args.c',
        'src/napi_cache.c',
        'src/napi_entry.c'
      ],
      'dependencies': ['http_message'],
      'defines': [
        'NAPI_VERSION=8',
        'NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED'
      ]
    }
  ]
}
