/// <reference types="assemblyscript/std/assembly/index" />
/// <reference types="@as-pect/assembly/types/as-pect.d" />
