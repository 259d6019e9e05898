interface DriverError {
  code?: string;
  constraint?: string;
}

/**
 * The constraint a failed statement broke (a unique index, a foreign key, a check),
 * from the driver's error or TypeORM's wrapper of it; null for any other failure.
 */
export function brokenConstraint(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const driver = (error as { driverError?: DriverError }).driverError ?? (error as DriverError);
  return /^23/.test(driver.code ?? '') ? (driver.constraint ?? null) : null;
}

/** Whether a statement failed with this SQLSTATE (from the driver's error or TypeORM's wrapper of it). */
export function failedWith(error: unknown, sqlstate: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const driver = (error as { driverError?: DriverError }).driverError ?? (error as DriverError);
  return driver.code === sqlstate;
}
