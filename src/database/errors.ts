interface DriverError {
  code?: string;
  constraint?: string;
  message?: string;
  detail?: string;
}

/**
 * The constraint a failed statement broke (a unique index, a foreign key, a check),
 * from the driver's error or TypeORM's wrapper of it; null for any other failure.
 */
export function brokenConstraint(error: unknown): string | null {
  const driver = driverErrorOf(error);
  return /^23/.test(driver?.code ?? '') ? (driver?.constraint ?? null) : null;
}

/** Whether a statement failed with this SQLSTATE (from the driver's error or TypeORM's wrapper of it). */
export function failedWith(error: unknown, sqlstate: string): boolean {
  return driverErrorOf(error)?.code === sqlstate;
}

/** A statement's failure with this SQLSTATE (a function of ours that raised it): its message and DETAIL; null otherwise. */
export function failureOf(error: unknown, sqlstate: string): { message: string; detail: string | null } | null {
  const driver = driverErrorOf(error);
  return driver?.code === sqlstate ? { message: driver.message ?? '', detail: driver.detail ?? null } : null;
}

/** The driver's error: TypeORM's wrapper unwrapped, or the error itself; null for no object. */
function driverErrorOf(error: unknown): DriverError | null {
  if (typeof error !== 'object' || error === null) {
    return null;
  }
  return (error as { driverError?: DriverError }).driverError ?? (error as DriverError);
}
