// Importing http-oneshot/register installs the shim; it exports nothing.
export {}
