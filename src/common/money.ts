import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';

/** A decimal string: up to 15 digits before the point, 9 after (docs/api.md §18). */
export const AMOUNT_PATTERN = /^(0|[1-9][0-9]{0,14})(\.[0-9]{1,9})?$/;
/** ISO 4217: three capital letters. */
export const CURRENCY_PATTERN = /^[A-Z]{3}$/;

/** An amount of money as views show it: a decimal string and its ISO 4217 currency (docs/api.md §18). */
export interface MoneyView {
  amount: string;
  currency: string;
}

/** An amount of money, as the reply's `usage.cost` and the monthly budget give it (docs/api.md §18). */
export class MoneyDto {
  @ApiProperty({ example: '12.50', description: 'A decimal string (up to 15 digits, 9 decimals).' })
  @IsString()
  @Matches(AMOUNT_PATTERN, { message: 'amount must be a decimal string such as "12.50"' })
  amount: string;

  @ApiProperty({ example: 'USD', description: 'ISO 4217 currency code.' })
  @IsString()
  @Matches(CURRENCY_PATTERN, { message: 'currency must be an ISO 4217 code such as "USD"' })
  currency: string;
}

/** A numeric column's text without the zeros its scale pads it with ("12.500000000" → "12.5"). */
export function decimal(value: string): string {
  return value.includes('.') ? value.replace(/\.?0+$/, '') : value;
}
